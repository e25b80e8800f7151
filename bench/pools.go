package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	scalingv1 "terraplane.io/terraplane/apis/scaling/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	"terraplane.io/terraplane/internal/resourcepool"
)

// sidePool measures claims filled from a ResourcePool against claims provisioned the
// usual way, on one controller in one run; it writes bench/results/pools.md.
const sidePool = "pool"

// poolResult is one (variant, N) of the pool side.
type poolResult struct {
	variant    string
	n          int
	fill       time.Duration // the pool's N members Ready, from the pool's creation
	cold, warm timing        // N claims of the class, then N claims naming the pool
	filledWarm int           // claims that took a member
}

// runPool starts a fresh controller, fills a pool of N Buckets of the variant's class,
// then makes N claims of the class (cold: provisioned) and N claims naming the pool
// (warm: each takes a ready member), each batch at once, and deletes everything.
func (h *harness) runPool(ctx context.Context, variant string, n int) (poolResult, error) {
	res := poolResult{variant: variant, n: n}
	if err := h.startFleet(ctx, fmt.Sprintf("%s-%d-pool", variant, n), false); err != nil {
		return res, err
	}
	defer h.stopFleet()
	class := strings.ReplaceAll(variant, "_", "-")
	pool := &scalingv1.ResourcePool{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: fmt.Sprintf("%s-%d", class, n)},
		Spec: scalingv1.ResourcePoolSpec{Size: int32(n), ClaimTemplate: scalingv1.ClaimTemplate{APIVersion: storagev1.GroupVersion.String(), Kind: "Bucket",
			Spec: &apiextensionsv1.JSON{Raw: []byte(fmt.Sprintf(`{"classRef":{"name":%q}}`, class))}}}}
	say("%s, N=%d: a pool of %d fills", variant, n, n)
	start := time.Now()
	if err := h.c.Create(ctx, pool); err != nil {
		return res, fmt.Errorf("create pool: %w", err)
	}
	if err := h.waitPool(ctx, pool, int32(n)); err != nil {
		return res, err
	}
	res.fill = time.Since(start)
	var names []string
	for _, tag := range []string{"pc", "pw"} {
		say("%s, N=%d: %d claims, %s", variant, n, n, map[string]string{"pc": "cold (provisioned)", "pw": "naming the pool"}[tag])
		batch, ready, err := h.poolBatch(ctx, class, n, tag, pool.Name)
		if err != nil {
			return res, err
		}
		names = append(names, batch...)
		if tag == "pc" {
			res.cold = ready
			continue
		}
		res.warm = ready
		for _, name := range batch {
			b := &storagev1.Bucket{}
			if err := h.c.Get(ctx, client.ObjectKey{Namespace: appNS, Name: name}, b); err != nil {
				return res, err
			}
			if _, ok := resourcepool.ParseFill(b.Annotations); ok {
				res.filledWarm++
			}
		}
	}
	return res, h.deletePool(ctx, pool, names)
}

// poolBatch creates n claims at once (naming the pool for tag pw) and returns when each
// was Ready.
func (h *harness) poolBatch(ctx context.Context, class string, n int, tag, pool string) ([]string, timing, error) {
	rw, err := h.watchReady(ctx)
	if err != nil {
		return nil, timing{}, err
	}
	rw.begin(ctx, time.Now())
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d-%s%d", class, n, tag, i)
		b := &storagev1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: names[i]}}
		if tag == "pw" {
			b.Spec.PoolRef = &common.PoolReference{Name: pool}
		} else {
			b.Spec.ClassRef = &common.LocalReference{Name: class}
		}
		if err := h.c.Create(ctx, b); err != nil {
			return nil, timing{}, fmt.Errorf("create claim: %w", err)
		}
	}
	ready, err := rw.wait(ctx, names)
	if err != nil {
		return nil, timing{}, err
	}
	return names, timingOf(ready), nil
}

// waitPool polls until the pool counts want ready members.
func (h *harness) waitPool(ctx context.Context, pool *scalingv1.ResourcePool, want int32) error {
	for deadline := time.Now().Add(30 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err := h.c.Get(ctx, client.ObjectKeyFromObject(pool), pool); err != nil {
			return err
		}
		if pool.Status.Ready >= want {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return fmt.Errorf("pool %s did not have %d ready members within 30 minutes", pool.Name, want)
}

// deletePool deletes the claims, the pool and its members (the bench's control plane
// runs no garbage collector), and waits until they are gone.
func (h *harness) deletePool(ctx context.Context, pool *scalingv1.ResourcePool, names []string) error {
	if err := h.c.Delete(ctx, pool); err != nil {
		return fmt.Errorf("delete pool: %w", err)
	}
	members := &storagev1.BucketList{}
	if err := h.c.List(ctx, members, client.InNamespace(appNS), client.MatchingLabels{common.PoolLabel: pool.Name}); err != nil {
		return err
	}
	for _, m := range members.Items {
		names = append(names, m.Name)
	}
	for _, name := range names {
		if err := client.IgnoreNotFound(h.c.Delete(ctx, &storagev1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: name}})); err != nil {
			return fmt.Errorf("delete claim: %w", err)
		}
	}
	return h.waitGone(ctx, names)
}

// writePools writes bench/results/pools.md and prints its table.
func writePools(o options, results []poolResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Parallelism %d; one controller, fresh for each row; %s. Each row fills a pool of N Buckets of the module's class, then creates N claims of the class (provisioned: \"cold\") and N claims naming the pool (each takes a ready member: \"warm\"), each batch at once, on the same controller. Times are from the batch's creation to each claim's Ready=True.\n\n",
		o.parallelism, time.Now().Format("2006-01-02"))
	b.WriteString("| module | N | pool of N filled (s) | cold claims: first / median / all Ready (s) | claims from the pool: first / median / all Ready (s) | filled from the pool | all Ready, pool vs cold |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %d | %s | %s / %s / %s | %s / %s / %s | %d of %d | %s |\n", r.variant, r.n, secs(r.fill),
			secs2(r.cold.first), secs2(r.cold.median), secs2(r.cold.last), secs2(r.warm.first), secs2(r.warm.median), secs2(r.warm.last),
			r.filledWarm, r.n, ratio(r.warm.last, r.cold.last))
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	md := "# Claims filled from a resource pool vs provisioned claims\n\n`go run ./bench -sides pool` (`make bench SIDES=pool`); [pools](../../docs/pools.md).\n\n" + b.String()
	path := filepath.Join(o.out, "pools.md")
	if err := os.WriteFile(path, []byte(md), 0o644); err != nil {
		return err
	}
	fmt.Println()
	fmt.Print(b.String())
	fmt.Printf("\nwritten: %s\n", path)
	return nil
}

// secs2 is a duration in seconds with two decimals: a warm claim is Ready in well under one.
func secs2(d time.Duration) string { return fmt.Sprintf("%.2f", d.Seconds()) }
