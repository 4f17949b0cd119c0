// Command control-plane runs a real Kubernetes control plane on loopback for virt-reconciler's
// real test lane: etcd embedded in this process, and the upstream kube-apiserver,
// kube-controller-manager and kube-scheduler as child processes of this same binary
// (hyperkube-style: `control-plane kube-apiserver ...` runs the upstream cobra command, so each
// component keeps its own global registries, flags and feature gates, exactly as when it is
// built as its own binary).
//
//	control-plane serve --dir DIR [--crds DIR] [--identities FILE] [--ready-file FILE] [--pprof-addr 127.0.0.1:0]
//	control-plane version
//
// `serve` generates a CA, serving certificates and a service-account key pair, writes one
// static bearer token per identity (--token-auth-file) and an audit policy (Metadata level, one
// JSON line per request: how the real lane counts API calls per identity, verb and resource),
// starts etcd, the API server (RBAC authorization), installs every CRD found under --crds and
// waits until each is Established, then starts the controller manager and the scheduler. When
// all of it is ready it writes the connection details as JSON to --ready-file (and prints one
// line "ready <file>"). SIGINT/SIGTERM stop the children, then etcd.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/component-base/version"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: control-plane serve --dir DIR [--crds DIR] [--identities FILE] [--ready-file FILE] | version")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "kube-apiserver":
		runComponent(apiserver.NewAPIServerCommand())
	case "kube-controller-manager":
		runComponent(controllermanager.NewControllerManagerCommand())
	case "kube-scheduler":
		runComponent(scheduler.NewSchedulerCommand())
	case "serve":
		if err := serve(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "control-plane:", err)
			os.Exit(1)
		}
	case "version":
		fmt.Println(version.Get().GitVersion)
	default:
		fmt.Fprintf(os.Stderr, "control-plane: unknown command %q\n", os.Args[1])
		os.Exit(2)
	}
}

// runComponent runs one upstream component's command with the rest of the arguments, the way
// its own main() does.
func runComponent(cmd *cobra.Command) {
	cmd.SetArgs(os.Args[2:])
	os.Exit(cli.Run(cmd))
}
