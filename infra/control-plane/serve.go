package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// readyInfo is what serve writes to --ready-file once every component is up: all a client
// needs to connect as any identity.
type readyInfo struct {
	Server      string            `json:"server"`
	CAFile      string            `json:"caFile"`
	Tokens      map[string]string `json:"tokens"`
	Users       map[string]string `json:"users"`
	AuditLog    string            `json:"auditLog"`
	Version     string            `json:"version"`
	Pid         int               `json:"pid"`
	Kubeconfigs map[string]string `json:"kubeconfigs"`
	// Pprof: each process's /debug/pprof base URL by component ("serve" is this process, with
	// etcd), when --pprof-addr was given.
	Pprof map[string]string `json:"pprof,omitempty"`
	// Etcd: the embedded etcd's client URL (plain HTTP on loopback; its gRPC gateway answers
	// /v3/kv/range and /v3/kv/compaction, which the chaos suite uses to compact the history).
	Etcd string `json:"etcd"`
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	dir := fs.String("dir", "", "state directory (certificates, tokens, etcd data, audit log); required")
	crds := fs.String("crds", "", "directory whose *.yaml CustomResourceDefinitions are installed at start (recursively)")
	readyFile := fs.String("ready-file", "", "where to write the connection details as JSON when ready (default DIR/ready.json)")
	port := fs.Int("port", 0, "API server port on 127.0.0.1 (0: a free one)")
	identitiesFile := fs.String("identities", "", "JSON file {\"<identity>\": {\"user\": \"...\", \"groups\": [\"...\"]}}: one static token each "+
		"(\"admin\", in system:masters, is always issued)")
	pprofAddr := fs.String("pprof-addr", "", "serve Go's /debug/pprof of this process (etcd) on this loopback address (e.g. 127.0.0.1:0) "+
		"and turn --profiling on in kube-apiserver, kube-controller-manager and kube-scheduler; the URLs go to the ready file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("--dir is required")
	}
	if *readyFile == "" {
		*readyFile = filepath.Join(*dir, "ready.json")
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		return err
	}
	os.Remove(*readyFile)
	self, err := os.Executable()
	if err != nil {
		return err
	}

	pki, err := writePKI(filepath.Join(*dir, "pki"))
	if err != nil {
		return fmt.Errorf("certificates: %w", err)
	}
	apiPort := *port
	if apiPort == 0 {
		if apiPort, err = freePort(); err != nil {
			return err
		}
	}
	server := fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	identities := map[string]identity{}
	if *identitiesFile != "" {
		data, err := os.ReadFile(*identitiesFile)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(data, &identities); err != nil {
			return fmt.Errorf("%s: %w", *identitiesFile, err)
		}
	}
	creds, err := writeCredentials(*dir, server, pki.caFile, identities)
	if err != nil {
		return err
	}
	auditPolicy := filepath.Join(*dir, "audit-policy.yaml")
	if err := os.WriteFile(auditPolicy, []byte(auditPolicyYAML), 0o600); err != nil {
		return err
	}
	auditLog := filepath.Join(*dir, "audit.log")
	os.Remove(auditLog)

	var pprofURLs map[string]string
	if *pprofAddr != "" {
		base, err := servePprof(*pprofAddr)
		if err != nil {
			return err
		}
		pprofURLs = map[string]string{"serve": base}
		logf("pprof of this process (etcd) at %s", base)
	}
	profiling := componentProfiling(pprofURLs != nil)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	etcd, etcdURL, err := startEtcd(filepath.Join(*dir, "etcd"))
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	defer etcd.Close()
	logf("etcd ready at %s", etcdURL)

	children := &childSet{}
	defer children.stopAll()
	go func() {
		select {
		case err := <-children.exited:
			logf("%v; stopping", err)
			stop()
		case <-ctx.Done():
		}
	}()

	apiArgs := []string{
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		// The endpoint reconciler refuses a loopback address for the kubernetes Service's
		// endpoints; nothing runs in-cluster here, so nobody needs them.
		"--endpoint-reconciler-type=none",
		fmt.Sprintf("--secure-port=%d", apiPort),
		"--etcd-servers=" + etcdURL,
		"--tls-cert-file=" + pki.servingCert,
		"--tls-private-key-file=" + pki.servingKey,
		"--client-ca-file=" + pki.caFile,
		"--token-auth-file=" + creds.tokenFile,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + pki.saPublic,
		"--service-account-signing-key-file=" + pki.saPrivate,
		"--service-cluster-ip-range=10.96.0.0/16",
		"--allow-privileged=true",
		"--audit-policy-file=" + auditPolicy,
		"--audit-log-path=" + auditLog,
		"--audit-log-format=json",
		// Blocking: a request's event is in the file when its response is sent, so a count
		// taken right after a call includes it.
		"--audit-log-mode=blocking",
		"--audit-log-maxbackup=0",
		"--audit-log-maxsize=0",
		profiling,
		"--v=0",
	}
	if err := children.start(ctx, self, "kube-apiserver", apiArgs, filepath.Join(*dir, "kube-apiserver.log")); err != nil {
		return err
	}
	// SIGUSR1: kube-apiserver is killed and started again on the same port, etcd and everything
	// else kept, as a crashed API server is restarted by its kubelet (the chaos suite's
	// "API server restarted mid-burst"; docs/reliability.md).
	restarts := make(chan os.Signal, 1)
	signal.Notify(restarts, syscall.SIGUSR1)
	defer signal.Stop(restarts)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-restarts:
				if err := children.restart(ctx, "kube-apiserver"); err != nil {
					logf("restarting kube-apiserver: %v", err)
				}
			}
		}
	}()
	admin, err := newClients(server, pki.caFile, creds.tokens["admin"])
	if err != nil {
		return err
	}
	if err := waitReady(ctx, admin, 3*time.Minute); err != nil {
		return fmt.Errorf("kube-apiserver did not become ready (see %s): %w", filepath.Join(*dir, "kube-apiserver.log"), err)
	}
	logf("kube-apiserver ready at %s", server)

	if *crds != "" {
		n, err := installCRDs(ctx, admin, *crds)
		if err != nil {
			return fmt.Errorf("CRDs: %w", err)
		}
		logf("%d CRDs installed and Established", n)
	}

	kcmPort, err := freePort()
	if err != nil {
		return err
	}
	schedPort, err := freePort()
	if err != nil {
		return err
	}
	kcmArgs := []string{
		"--kubeconfig=" + creds.kubeconfigs["kube-controller-manager"],
		"--authentication-kubeconfig=" + creds.kubeconfigs["kube-controller-manager"],
		"--authorization-kubeconfig=" + creds.kubeconfigs["kube-controller-manager"],
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", kcmPort),
		"--leader-elect=false",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file=" + pki.saPrivate,
		"--root-ca-file=" + pki.caFile,
		"--cluster-signing-cert-file=" + pki.caFile,
		"--cluster-signing-key-file=" + pki.caKey,
		"--controllers=*",
		profiling,
		"--v=0",
	}
	if err := children.start(ctx, self, "kube-controller-manager", kcmArgs, filepath.Join(*dir, "kube-controller-manager.log")); err != nil {
		return err
	}
	schedArgs := []string{
		"--kubeconfig=" + creds.kubeconfigs["kube-scheduler"],
		"--authentication-kubeconfig=" + creds.kubeconfigs["kube-scheduler"],
		"--authorization-kubeconfig=" + creds.kubeconfigs["kube-scheduler"],
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", schedPort),
		"--leader-elect=false",
		profiling,
		"--v=0",
	}
	if err := children.start(ctx, self, "kube-scheduler", schedArgs, filepath.Join(*dir, "kube-scheduler.log")); err != nil {
		return err
	}
	if err := waitHealthy(ctx, "kube-controller-manager", fmt.Sprintf("https://127.0.0.1:%d/healthz", kcmPort), 2*time.Minute); err != nil {
		return err
	}
	if err := waitHealthy(ctx, "kube-scheduler", fmt.Sprintf("https://127.0.0.1:%d/readyz", schedPort), 2*time.Minute); err != nil {
		return err
	}
	logf("kube-controller-manager and kube-scheduler running")

	if pprofURLs != nil {
		pprofURLs["kube-apiserver"] = server + "/debug/pprof"
		pprofURLs["kube-controller-manager"] = fmt.Sprintf("https://127.0.0.1:%d/debug/pprof", kcmPort)
		pprofURLs["kube-scheduler"] = fmt.Sprintf("https://127.0.0.1:%d/debug/pprof", schedPort)
	}
	info := readyInfo{
		Server: server, CAFile: pki.caFile, Tokens: creds.tokens, Users: creds.users,
		AuditLog: auditLog, Version: versionString(admin), Pid: os.Getpid(), Kubeconfigs: creds.kubeconfigs,
		Pprof: pprofURLs, Etcd: etcdURL,
	}
	data, _ := json.MarshalIndent(info, "", "  ")
	tmp := *readyFile + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, *readyFile); err != nil {
		return err
	}
	fmt.Printf("ready %s\n", *readyFile)

	<-ctx.Done()
	logf("stopping")
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "control-plane: "+format+"\n", args...)
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startEtcd runs a single-member etcd in this process on two free loopback ports.
func startEtcd(dataDir string) (*embed.Etcd, string, error) {
	clientPort, err := freePort()
	if err != nil {
		return nil, "", err
	}
	peerPort, err := freePort()
	if err != nil {
		return nil, "", err
	}
	cu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", clientPort))
	pu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", peerPort))
	// A fresh store every start: the lane wants a clean cluster, and a stale member directory
	// with other ports would not start.
	os.RemoveAll(dataDir)
	cfg := embed.NewConfig()
	cfg.Name = "control-plane"
	cfg.Dir = dataDir
	cfg.ListenClientUrls = []url.URL{*cu}
	cfg.AdvertiseClientUrls = []url.URL{*cu}
	cfg.ListenPeerUrls = []url.URL{*pu}
	cfg.AdvertisePeerUrls = []url.URL{*pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "error"
	// Tests are throwaway clusters: fsync costs more than it protects here.
	cfg.UnsafeNoFsync = true
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, "", err
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(time.Minute):
		e.Close()
		return nil, "", errors.New("not ready after a minute")
	}
	return e, cu.String(), nil
}

// childSet runs components as children of this process and reports the first unexpected exit.
type childSet struct {
	mu     sync.Mutex
	cmds   []*exec.Cmd
	exited chan error
	once   sync.Once
	// How each component was started, for restart; and the commands killed on purpose, whose
	// exit is no reason to stop.
	how    map[string]childStart
	killed map[*exec.Cmd]bool
}

type childStart struct {
	self, logPath string
	args          []string
	cmd           *exec.Cmd
}

// restart kills a running component (SIGKILL: a crash, not a shutdown) and starts it again with
// the same arguments, appending to its log.
func (c *childSet) restart(ctx context.Context, component string) error {
	c.mu.Lock()
	how, ok := c.how[component]
	if ok {
		c.killed[how.cmd] = true
	}
	c.mu.Unlock()
	if !ok {
		return fmt.Errorf("%s was never started", component)
	}
	_ = how.cmd.Process.Kill()
	for how.cmd.ProcessState == nil {
		if err := how.cmd.Process.Signal(syscall.Signal(0)); err != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	logf("%s killed (pid %d); starting it again", component, how.cmd.Process.Pid)
	return c.start(ctx, how.self, component, how.args, how.logPath)
}

func (c *childSet) start(ctx context.Context, self, component string, args []string, logPath string) error {
	c.once.Do(func() {
		c.exited = make(chan error, 8)
		c.how = map[string]childStart{}
		c.killed = map[*exec.Cmd]bool{}
	})
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(self, append([]string{component}, args...)...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	// Children die with us even if we are killed without a chance to stop them.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("%s: %w", component, err)
	}
	c.mu.Lock()
	c.cmds = append(c.cmds, cmd)
	c.how[component] = childStart{self: self, logPath: logPath, args: args, cmd: cmd}
	c.mu.Unlock()
	logf("%s started (pid %d, log %s)", component, cmd.Process.Pid, logPath)
	go func() {
		err := cmd.Wait()
		logFile.Close()
		c.mu.Lock()
		onPurpose := c.killed[cmd]
		c.mu.Unlock()
		if ctx.Err() == nil && !onPurpose {
			c.exited <- fmt.Errorf("%s exited (%v); see %s", component, err, logPath)
		}
	}()
	return nil
}

// stopAll stops the children in reverse start order, SIGTERM first, SIGKILL after 10 s.
func (c *childSet) stopAll() {
	c.mu.Lock()
	cmds := append([]*exec.Cmd(nil), c.cmds...)
	c.mu.Unlock()
	for i := len(cmds) - 1; i >= 0; i-- {
		cmd := cmds[i]
		if cmd.ProcessState != nil {
			continue
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() {
			for cmd.ProcessState == nil {
				if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	}
}

// auditPolicyYAML records every request once, at ResponseComplete (who, verb, resource,
// namespace, name, status: Metadata level), which is how the real lane counts API calls per
// identity, verb and resource. Writes to pods, events and the KubeVirt/CDI objects also carry the
// object after the write (RequestResponse), as the emulator's audit log does: the suites check
// what was written (a target pod's selectors, the phases a migration went through).
const auditPolicyYAML = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages:
  - RequestReceived
  - ResponseStarted
rules:
  - level: RequestResponse
    verbs: ["create", "update", "patch", "delete"]
    resources:
      - group: ""
        resources: ["pods", "pods/status", "events"]
      - group: "events.k8s.io"
      - group: "kubevirt.io"
      - group: "cdi.kubevirt.io"
  - level: Metadata
`
