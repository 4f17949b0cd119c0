package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// pkiFiles are the key material serve generates on every start (nothing is reused: each
// cluster is new, so a leaked file from an earlier run grants nothing).
type pkiFiles struct {
	caFile, caKey, servingCert, servingKey, saPrivate, saPublic string
}

func writePKI(dir string) (pkiFiles, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return pkiFiles{}, err
	}
	f := pkiFiles{
		caFile: filepath.Join(dir, "ca.crt"), caKey: filepath.Join(dir, "ca.key"),
		servingCert: filepath.Join(dir, "apiserver.crt"), servingKey: filepath.Join(dir, "apiserver.key"),
		saPrivate: filepath.Join(dir, "sa.key"), saPublic: filepath.Join(dir, "sa.pub"),
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return f, err
	}
	caTemplate := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "virt-reconciler control-plane CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return f, err
	}
	caCert, _ := x509.ParseCertificate(caDER)

	servingKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return f, err
	}
	servingTemplate := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")},
	}
	servingDER, err := x509.CreateCertificate(rand.Reader, servingTemplate, caCert, &servingKey.PublicKey, caKey)
	if err != nil {
		return f, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return f, err
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return f, err
	}
	for path, block := range map[string]*pem.Block{
		f.caFile:      {Type: "CERTIFICATE", Bytes: caDER},
		f.caKey:       ecKeyBlock(caKey),
		f.servingCert: {Type: "CERTIFICATE", Bytes: servingDER},
		f.servingKey:  ecKeyBlock(servingKey),
		f.saPrivate:   ecKeyBlock(saKey),
		f.saPublic:    {Type: "PUBLIC KEY", Bytes: saPub},
	} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			return f, err
		}
	}
	return f, nil
}

func ecKeyBlock(k *ecdsa.PrivateKey) *pem.Block {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		panic(err)
	}
	return &pem.Block{Type: "EC PRIVATE KEY", Bytes: der}
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// credentials are the static tokens (one per identity) and a kubeconfig per identity.
type credentials struct {
	tokenFile   string
	tokens      map[string]string // identity -> bearer token
	users       map[string]string // identity -> user name the API server sees
	kubeconfigs map[string]string // identity -> kubeconfig path
}

// identity is a user name and its groups, as the token file gives them.
type identity struct {
	User   string   `json:"user"`
	Groups []string `json:"groups,omitempty"`
}

// writeCredentials issues one token per identity. "admin" (the operator, the tests) is in
// system:masters; kube-controller-manager and kube-scheduler get the user names the API
// server's bootstrap RBAC policy binds (system:kube-controller-manager, system:kube-scheduler);
// every other identity can do exactly what the RBAC objects bound to its user or groups allow.
func writeCredentials(dir, server, caFile string, extra map[string]identity) (credentials, error) {
	c := credentials{
		tokenFile:   filepath.Join(dir, "tokens.csv"),
		tokens:      map[string]string{},
		users:       map[string]string{},
		kubeconfigs: map[string]string{},
	}
	all := map[string]identity{
		"admin":                   {User: "admin", Groups: []string{"system:masters"}},
		"kube-controller-manager": {User: "system:kube-controller-manager"},
		"kube-scheduler":          {User: "system:kube-scheduler"},
	}
	for id, who := range extra {
		if id == "" || who.User == "" || strings.ContainsAny(id+who.User+strings.Join(who.Groups, ""), ",\"\n/") {
			return c, fmt.Errorf("bad identity %q: %+v", id, who)
		}
		all[id] = who
	}
	ids := make([]string, 0, len(all))
	for id := range all {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var csv strings.Builder
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return c, err
	}
	kubeDir := filepath.Join(dir, "kubeconfig")
	if err := os.MkdirAll(kubeDir, 0o700); err != nil {
		return c, err
	}
	for i, id := range ids {
		who := all[id]
		token := randomToken()
		c.tokens[id] = token
		c.users[id] = who.User
		// token,user,uid,"group1,group2"
		fmt.Fprintf(&csv, "%s,%s,uid-%d", token, who.User, i)
		if len(who.Groups) > 0 {
			fmt.Fprintf(&csv, ",\"%s\"", strings.Join(who.Groups, ","))
		}
		csv.WriteString("\n")
		path := filepath.Join(kubeDir, id+".yaml")
		if err := os.WriteFile(path, []byte(kubeconfigYAML(server, caPEM, id, token)), 0o600); err != nil {
			return c, err
		}
		c.kubeconfigs[id] = path
	}
	if err := os.WriteFile(c.tokenFile, []byte(csv.String()), 0o600); err != nil {
		return c, err
	}
	return c, nil
}

func kubeconfigYAML(server string, caPEM []byte, id, token string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: control-plane
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    token: %s
contexts:
- name: %s
  context:
    cluster: control-plane
    user: %s
current-context: %s
`, server, b64(caPEM), id, token, id, id, id)
}
