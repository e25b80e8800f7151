package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/test/framework"
)

// countingEndpoint is an S3 endpoint that passes every request on to a MinIO, a little
// late (so that runs sharing a provider overlap as they would against a real cloud), and
// remembers the bucket (the first path segment, path-style) each one named.
type countingEndpoint struct {
	*httptest.Server
	mu      sync.Mutex
	buckets map[string]int
}

func newCountingEndpoint(t *testing.T, target string) *countingEndpoint {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	e := &countingEndpoint{buckets: map[string]int{}}
	proxy := httputil.NewSingleHostReverseProxy(u) // keeps the Host header the request was signed for
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bucket, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		e.mu.Lock()
		e.buckets[bucket]++
		e.mu.Unlock()
		time.Sleep(150 * time.Millisecond)
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(e.Close)
	return e
}

// requests counts the requests that named a bucket with prefix, and all requests that
// named a bucket.
func (e *countingEndpoint) requests(prefix string) (matching, all int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for b, n := range e.buckets {
		if b == "" {
			continue
		}
		all += n
		if strings.HasPrefix(b, prefix) {
			matching += n
		}
	}
	return matching, all
}

// TestProvidersNeverShareAProcess: two aws Providers with the same credentials but
// different endpoints (two MinIO servers) create buckets at once with warm provider
// processes on; every request of a Provider's buckets reaches its own endpoint.
func TestProvidersNeverShareAProcess(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns := "e2e-crosstalk"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	second, err := devenv.StartMinIO(ctx, filepath.Join(t.TempDir(), "minio"), 0, minioUser, minioPassword)
	g.Expect(err).NotTo(HaveOccurred())
	defer second.Stop()
	endpoints := map[string]*countingEndpoint{"xa-": newCountingEndpoint(t, minioServer.Endpoint), "xb-": newCountingEndpoint(t, second.Endpoint)}

	g.Expect(env.Client.Create(ctx, framework.CredentialsSecret(ns, "creds", minioUser, minioPassword))).To(Succeed())
	for prefix, ep := range endpoints {
		g.Expect(env.Client.Create(ctx, framework.S3Provider(ns, "p-"+strings.TrimSuffix(prefix, "-"), "creds", ep.URL))).To(Succeed())
	}
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	const perProvider = 4
	var buckets []*awsstoragev1.S3Bucket
	for i := range perProvider {
		for prefix := range endpoints {
			b := &awsstoragev1.S3Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s%d", prefix, i)}}
			b.Spec.ProviderRef = &common.LocalReference{Name: "p-" + strings.TrimSuffix(prefix, "-")}
			b.Spec.ForProvider = awsstoragev1.S3BucketParameters{BucketName: fmt.Sprintf("%sbucket-%d", prefix, i), ForceDestroy: true}
			buckets = append(buckets, b)
		}
	}
	By(t, fmt.Sprintf("%d buckets, half through each Provider, are created at once", len(buckets)))
	for _, b := range buckets {
		g.Expect(env.Client.Create(ctx, b)).To(Succeed())
	}
	allReady := func() bool {
		for _, b := range buckets {
			if env.Client.Get(ctx, client.ObjectKeyFromObject(b), b) != nil ||
				framework.Condition(b.Status.Conditions, common.TypeReady).Status != metav1.ConditionTrue {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(2 * timeout)
	for !allReady() && time.Now().Before(deadline) {
		time.Sleep(2 * time.Second)
	}

	By(t, "no request of one Provider's buckets reached the other Provider's endpoint")
	misrouted, total := 0, 0
	for prefix, ep := range endpoints {
		own, all := ep.requests(prefix)
		misrouted += all - own
		total += all
		t.Logf("endpoint of %s*: %d bucket requests, %d of them for the other Provider's buckets", prefix, all, all-own)
	}
	t.Logf("FIGURE %d bucket requests, %d misrouted; %d provider processes", total, misrouted, mgr.Engine.ProvidersStarted())
	g.Expect(total).To(BeNumerically(">=", len(buckets)))
	g.Expect(misrouted).To(BeZero())
	g.Expect(allReady()).To(BeTrue(), "every bucket is Ready")
	g.Expect(mgr.Engine.ProvidersStarted()).To(Equal(len(endpoints)), "each Provider has a provider process of its own, shared by its runs")

	for _, b := range buckets {
		g.Expect(env.Client.Delete(ctx, b)).To(Succeed())
	}
	for _, b := range buckets {
		g.Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(b), b))
		}).WithTimeout(2 * timeout).WithPolling(2 * time.Second).Should(BeTrue())
	}
}
