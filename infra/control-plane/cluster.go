package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

type clients struct {
	kube kubernetes.Interface
	ext  apiextensions.Interface
}

func newClients(server, caFile, token string) (*clients, error) {
	cfg := &rest.Config{
		Host:            server,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAFile: caFile},
		QPS:             200,
		Burst:           400,
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ext, err := apiextensions.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &clients{kube: kube, ext: ext}, nil
}

// waitReady polls the API server's /readyz until it answers ok.
func waitReady(ctx context.Context, c *clients, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		body, err := c.kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil && strings.TrimSpace(string(body)) == "ok" {
			return nil
		}
		last = err
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("timed out: %v", last)
}

// installCRDs creates every CustomResourceDefinition in the YAML files under dir (server-side,
// with create: these schemas are too big for a client-side apply annotation) and waits until
// each is Established, so the cluster serves them before anyone is told it is ready.
func installCRDs(ctx context.Context, c *clients, dir string) (int, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	sort.Strings(files)
	var names []string
	for _, file := range files {
		crds, err := readCRDs(file)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", file, err)
		}
		for _, crd := range crds {
			_, err := c.ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return 0, fmt.Errorf("%s: create %s: %w", file, crd.Name, err)
			}
			names = append(names, crd.Name)
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for _, name := range names {
		for {
			crd, err := c.ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
			if err == nil && established(crd) {
				break
			}
			if time.Now().After(deadline) {
				return 0, fmt.Errorf("%s not Established after 2 minutes (%v)", name, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return len(names), nil
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// readCRDs decodes the CustomResourceDefinition documents of one (multi-document) YAML file;
// documents of other kinds are skipped.
func readCRDs(file string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*apiextensionsv1.CustomResourceDefinition
	for {
		doc, err := reader.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		var meta metav1.TypeMeta
		if err := utilyaml.Unmarshal(doc, &meta); err != nil {
			return nil, err
		}
		if meta.Kind != "CustomResourceDefinition" {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := utilyaml.UnmarshalStrict(doc, crd); err != nil {
			// Not strict: some published CRDs carry fields newer than this API version knows.
			if err := utilyaml.Unmarshal(doc, crd); err != nil {
				return nil, err
			}
		}
		out = append(out, crd)
	}
}

// waitHealthy polls a component's own health endpoint (served with its self-signed
// certificate on loopback, hence no verification) until it answers ok.
func waitHealthy(ctx context.Context, name, url string, timeout time.Duration) error {
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
	}
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		resp, err := client.Get(url)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(body)))
		} else {
			last = err.Error()
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("%s not healthy after %s: %s", name, timeout, last)
}

func versionString(c *clients) string {
	v, err := c.kube.Discovery().ServerVersion()
	if err != nil {
		return ""
	}
	return v.GitVersion
}
