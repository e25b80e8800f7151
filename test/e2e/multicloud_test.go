package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/devenv"
	tfengine "terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/test/framework"
)

// The aws Provider's keys in the multicloud test: no connection Secret may hold them.
const (
	multicloudAccessKey = "AKIAMULTICLOUDE2E"
	multicloudSecretKey = "multicloud-e2e-provider-secret"
)

// awsClaims are the claims of the other AWS kinds, in the RDS team's namespace, with
// their classes: a MySQL database on RDS, Redis on ElastiCache and a cluster on EKS.
// The AWS API emulator gives every DB instance the same resource ID, with which the
// aws provider reads it back, so the MySQL instance is made through a second Provider
// on a second emulator (MOTO2).
const awsClaims = `
apiVersion: aws.terraplane.io/v1alpha1
kind: Provider
metadata: {name: aws-second-emulator, namespace: terraplane-system}
spec:
  region: us-east-1
  credentialsSecretRef: {name: aws-keys}
  endpoints: {rds: MOTO2, sts: MOTO2, ec2: MOTO2}
  skipCredentialsValidation: true
  skipRequestingAccountID: true
  skipMetadataAPICheck: true
---
apiVersion: database.aws.terraplane.io/v1alpha1
kind: RDSInstanceClass
metadata: {name: rds-mysql, namespace: terraplane-system}
allowedNamespaces: {names: [team-aws]}
specTemplate:
  providerRef: {name: aws-second-emulator}
  forProvider: {engine: mysql, parameters: {max_connections: "150"}}
---
apiVersion: cache.aws.terraplane.io/v1alpha1
kind: ReplicationGroupClass
metadata: {name: redis, namespace: terraplane-system}
allowedNamespaces: {names: [team-aws]}
specTemplate:
  providerRef: {name: aws}
  reclaimPolicy: Retain # the emulator never finishes deleting a cache cluster
  forProvider: {nodeType: cache.t3.micro}
---
apiVersion: compute.aws.terraplane.io/v1alpha1
kind: EKSClusterClass
metadata: {name: eks, namespace: terraplane-system}
allowedNamespaces: {names: [team-aws]}
specTemplate:
  providerRef: {name: aws}
  forProvider: {instanceTypes: [t3.large]}
---
apiVersion: database.terraplane.io/v1alpha1
kind: MySQLInstanceClass
metadata: {name: standard, namespace: team-aws, labels: {terraplane.io/default: "true"}}
classRef: {apiVersion: database.aws.terraplane.io/v1alpha1, kind: RDSInstanceClass, name: rds-mysql, namespace: terraplane-system}
---
apiVersion: cache.terraplane.io/v1alpha1
kind: RedisClusterClass
metadata: {name: standard, namespace: team-aws, labels: {terraplane.io/default: "true"}}
classRef: {apiVersion: cache.aws.terraplane.io/v1alpha1, kind: ReplicationGroupClass, name: redis, namespace: terraplane-system}
---
apiVersion: compute.terraplane.io/v1alpha1
kind: KubernetesClusterClass
metadata: {name: standard, namespace: team-aws, labels: {terraplane.io/default: "true"}}
classRef: {apiVersion: compute.aws.terraplane.io/v1alpha1, kind: EKSClusterClass, name: eks, namespace: terraplane-system}
---
apiVersion: database.terraplane.io/v1alpha1
kind: MySQLInstance
metadata: {name: shop-db, namespace: team-aws}
spec: {engineVersion: "8.0", writeConnectionSecretToRef: {name: shop-db-conn}}
---
apiVersion: cache.terraplane.io/v1alpha1
kind: RedisCluster
metadata: {name: sessions, namespace: team-aws}
spec: {engineVersion: "7.1", nodes: 1, writeConnectionSecretToRef: {name: sessions-conn}}
---
apiVersion: compute.terraplane.io/v1alpha1
kind: KubernetesCluster
metadata: {name: apps, namespace: team-aws}
spec: {version: "1.31", nodeCount: 3, writeConnectionSecretToRef: {name: apps-conn}}
`

// claimRef names one claim of the test.
type claimRef struct {
	gvk       schema.GroupVersionKind
	namespace string
	name      string
}

func (c claimRef) String() string { return c.gvk.Kind + " " + c.namespace + "/" + c.name }

// TestMulticloudPostgreSQL applies examples/multicloud: the same PostgreSQLInstance claim
// is met by RDS (on the AWS API emulator) in one namespace and by an on-prem PostgreSQL
// server in the other, both with the same connection keys. Beside it a MySQLInstance,
// a RedisCluster and a KubernetesCluster are met by RDS, ElastiCache and EKS. What AWS
// made is checked through the AWS API; no connection Secret holds the Provider's keys;
// deleting the claims destroys it all, except the cache: the emulator leaves a deleted
// cache cluster "deleting" for ever, so its class retains it.
func TestMulticloudPostgreSQL(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	moto, err := framework.StartMoto(ctx, t.TempDir())
	g.Expect(err).NotTo(HaveOccurred())
	defer moto.Stop()
	moto2, err := framework.StartMoto(ctx, t.TempDir())
	g.Expect(err).NotTo(HaveOccurred())
	defer moto2.Stop()
	pg := startServer(t, framework.StartPostgres)
	mgr, err := env.StartManager(t.TempDir(), app.Options{Engine: tfengine.Options{MaxConcurrent: 6, MaxConcurrentPerGroup: 6}})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	By(t, "the example, pointed at this test's emulator and server")
	_, err = devenv.ApplyDirWith(ctx, env.Client, "../../examples/multicloud", pointAt(moto, pg))
	g.Expect(err).NotTo(HaveOccurred())
	start := time.Now()
	for _, ns := range []string{"team-aws", "team-onprem"} {
		_, err = devenv.ApplyDirWith(ctx, env.Client, "../../examples/multicloud/claim", func(o *unstructured.Unstructured) error {
			o.SetNamespace(ns)
			return nil
		})
		g.Expect(err).NotTo(HaveOccurred())
	}
	_, err = devenv.ApplyYAML(ctx, env.Client, []byte(strings.ReplaceAll(awsClaims, "MOTO2", moto2.Endpoint)))
	g.Expect(err).NotTo(HaveOccurred())

	pgKind := schema.GroupVersionKind{Group: "database.terraplane.io", Version: "v1alpha1", Kind: "PostgreSQLInstance"}
	rdsPG, onpremPG := claimRef{pgKind, "team-aws", "orders-db"}, claimRef{pgKind, "team-onprem", "orders-db"}
	mysql := claimRef{pgKind, "team-aws", "shop-db"}
	mysql.gvk.Kind = "MySQLInstance"
	redis := claimRef{schema.GroupVersionKind{Group: "cache.terraplane.io", Version: "v1alpha1", Kind: "RedisCluster"}, "team-aws", "sessions"}
	eks := claimRef{schema.GroupVersionKind{Group: "compute.terraplane.io", Version: "v1alpha1", Kind: "KubernetesCluster"}, "team-aws", "apps"}
	claims := []claimRef{rdsPG, onpremPG, mysql, redis, eks}

	By(t, "every claim becomes Bound and Ready")
	took := waitEach(t, claims, func(g Gomega, c claimRef) { expectClaimReady(ctx, g, c) })
	for _, c := range claims {
		t.Logf("TIMING %s Ready %s after it was applied", c, took[c].Sub(start).Round(time.Second))
	}

	By(t, "both PostgreSQL claims have the same connection keys, and no Secret holds the Provider's keys")
	secrets := map[claimRef]*corev1.Secret{}
	for _, c := range claims {
		s := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: c.namespace, Name: c.name + "-conn"}, s)).To(Succeed())
		secrets[c] = s
		for k, v := range s.Data {
			g.Expect(string(v)).NotTo(Or(Equal(multicloudAccessKey), Equal(multicloudSecretKey)), "%s key %s", c, k)
		}
	}
	dbKeys := []string{"database", "endpoint", "password", "port", "username"}
	g.Expect(keys(secrets[rdsPG])).To(Equal(dbKeys))
	g.Expect(keys(secrets[onpremPG])).To(Equal(dbKeys))
	g.Expect(keys(secrets[mysql])).To(Equal(dbKeys))
	g.Expect(secrets[redis].Data).To(HaveKeyWithValue("port", []byte("6379")))
	g.Expect(secrets[redis].Data).NotTo(HaveKey("password"), "no AUTH without authToken")
	g.Expect(keys(secrets[eks])).To(Equal([]string{"clusterCA", "endpoint", "kubeconfig"}))

	By(t, "the on-prem database answers with its Secret")
	s := secrets[onpremPG]
	out, err := runClient(map[string]string{"PGPASSWORD": string(s.Data["password"])}, "psql", "-X", "-tA", "-h", string(s.Data["endpoint"]),
		"-p", string(s.Data["port"]), "-U", string(s.Data["username"]), "-d", string(s.Data["database"]), "-c", "SELECT current_database()")
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(Equal(string(s.Data["database"])))

	By(t, "AWS has the RDS instances, the cache cluster and the EKS cluster the Secrets describe")
	expectRDS(ctx, g, moto, secrets[rdsPG], "postgres", "15")
	expectRDS(ctx, g, moto2, secrets[mysql], "mysql", "8.0")
	cacheID := managedField(ctx, g, redis, "spec", "forProvider", "replicationGroupID")
	releasedCache := managedObject(ctx, g, redis)
	caches, err := moto.Call(ctx, "elasticache", "describe_cache_clusters", map[string]any{"CacheClusterId": cacheID})
	g.Expect(err).NotTo(HaveOccurred())
	cache := caches["CacheClusters"].([]any)[0].(map[string]any)
	g.Expect(cache).To(And(HaveKeyWithValue("Engine", "redis"), HaveKeyWithValue("EngineVersion", "7.1"), HaveKeyWithValue("CacheNodeType", "cache.t3.micro")))
	clusterName := managedField(ctx, g, eks, "spec", "forProvider", "clusterName")
	cluster, err := moto.Call(ctx, "eks", "describe_cluster", map[string]any{"name": clusterName})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cluster["cluster"]).To(And(HaveKeyWithValue("version", "1.31"), HaveKeyWithValue("endpoint", string(secrets[eks].Data["endpoint"]))))
	nodes, err := moto.Call(ctx, "eks", "describe_nodegroup", map[string]any{"clusterName": clusterName, "nodegroupName": "default"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(nodes["nodegroup"].(map[string]any)["scalingConfig"]).To(HaveKeyWithValue("desiredSize", BeNumerically("==", 3)))
	g.Expect(string(secrets[eks].Data["kubeconfig"])).To(And(ContainSubstring("get-token"), ContainSubstring(clusterName)))

	By(t, "deleting the claims destroys what they made; the retained cache stays, Released")
	start = time.Now()
	for _, c := range claims {
		g.Expect(env.Client.Delete(ctx, claimObject(c))).To(Succeed())
	}
	took = waitEach(t, claims, func(g Gomega, c claimRef) {
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(claimObject(c)), claimObject(c)))).To(BeTrue(), "%s still exists", c)
	})
	for _, c := range claims {
		t.Logf("TIMING %s gone %s after it was deleted", c, took[c].Sub(start).Round(time.Second))
	}
	_, err = moto.Call(ctx, "rds", "describe_db_instances", map[string]any{"DBInstanceIdentifier": rdsIdentifier(secrets[rdsPG])})
	g.Expect(err).To(MatchError(ContainSubstring("DBInstanceNotFound")))
	_, err = moto2.Call(ctx, "rds", "describe_db_instances", map[string]any{"DBInstanceIdentifier": rdsIdentifier(secrets[mysql])})
	g.Expect(err).To(MatchError(ContainSubstring("DBInstanceNotFound")))
	caches, err = moto.Call(ctx, "elasticache", "describe_cache_clusters", map[string]any{"CacheClusterId": cacheID})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(caches["CacheClusters"].([]any)[0]).To(HaveKeyWithValue("CacheClusterStatus", "available"))
	g.Expect(releasedCache.Object).NotTo(BeNil())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(releasedCache), releasedCache)).To(Succeed())
		phase, _, _ := unstructured.NestedString(releasedCache.Object, "status", "bindingPhase")
		g.Expect(phase).To(Equal("Released"))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, releasedCache)).To(Succeed())
	_, err = moto.Call(ctx, "eks", "describe_cluster", map[string]any{"name": clusterName})
	g.Expect(err).To(MatchError(ContainSubstring("ResourceNotFound")))
	out, err = runClient(map[string]string{"PGPASSWORD": pg.AdminPassword}, "psql", "-X", "-tA", "-h", pg.Host, "-p", fmt.Sprint(pg.Port),
		"-U", pg.AdminUser, "-d", "postgres", "-c", fmt.Sprintf("SELECT count(*) FROM pg_database WHERE datname = '%s'", secrets[onpremPG].Data["database"]))
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(Equal("0"))
}

// pointAt edits the example's Providers and Secrets to this test's emulator and server.
func pointAt(moto *framework.Moto, pg *framework.Server) devenv.Edit {
	return func(o *unstructured.Unstructured) error {
		switch group := o.GroupVersionKind().Group; {
		case o.GetKind() == "Provider" && group == "aws.terraplane.io":
			endpoints := map[string]any{}
			for _, service := range []string{"rds", "sts", "ec2", "iam", "eks", "elasticache"} {
				endpoints[service] = moto.Endpoint
			}
			return unstructured.SetNestedMap(o.Object, endpoints, "spec", "endpoints")
		case o.GetKind() == "Provider" && group == "postgresql.terraplane.io":
			return unstructured.SetNestedField(o.Object, int64(pg.Port), "spec", "port")
		case o.GetKind() == "Secret" && o.GetName() == "postgres-admin":
			return unstructured.SetNestedStringMap(o.Object, map[string]string{"username": pg.AdminUser, "password": pg.AdminPassword}, "stringData")
		case o.GetKind() == "Secret" && o.GetName() == "aws-keys":
			return unstructured.SetNestedStringMap(o.Object, map[string]string{"accessKeyID": multicloudAccessKey, "secretAccessKey": multicloudSecretKey}, "stringData")
		}
		return nil
	}
}

// waitEach waits, in parallel, until check passes for every claim, and says when it did.
func waitEach(t *testing.T, claims []claimRef, check func(Gomega, claimRef)) map[claimRef]time.Time {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	done := map[claimRef]time.Time{}
	for _, c := range claims {
		wg.Add(1)
		go func() {
			defer wg.Done()
			NewWithT(t).Eventually(func(g Gomega) { check(g, c) }).WithTimeout(10*time.Minute).WithPolling(time.Second).Should(Succeed(), "%s", c)
			mu.Lock()
			done[c] = time.Now()
			mu.Unlock()
		}()
	}
	wg.Wait()
	return done
}

func claimObject(c claimRef) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(c.gvk)
	u.SetNamespace(c.namespace)
	u.SetName(c.name)
	return u
}

// expectClaimReady checks that a claim is Bound with Ready and Synced True.
func expectClaimReady(ctx context.Context, g Gomega, c claimRef) {
	u := claimObject(c)
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(u), u)).To(Succeed())
	phase, _, _ := unstructured.NestedString(u.Object, "status", "bindingPhase")
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	g.Expect(phase).To(Equal("Bound"), "%s: %v", c, conditions)
	for _, typ := range []string{"Ready", "Synced"} {
		g.Expect(conditions).To(ContainElement(And(HaveKeyWithValue("type", typ), HaveKeyWithValue("status", "True"))), "%s", c)
	}
}

// managedObject reads the managed resource a claim is bound to.
func managedObject(ctx context.Context, g Gomega, c claimRef) *unstructured.Unstructured {
	u := claimObject(c)
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(u), u)).To(Succeed())
	ref, _, _ := unstructured.NestedStringMap(u.Object, "spec", "resourceRef")
	mg := &unstructured.Unstructured{}
	mg.SetAPIVersion(ref["apiVersion"])
	mg.SetKind(ref["kind"])
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ref["namespace"], Name: ref["name"]}, mg)).To(Succeed())
	return mg
}

// managedField reads a field of the managed resource a claim is bound to.
func managedField(ctx context.Context, g Gomega, c claimRef, fields ...string) string {
	v, _, _ := unstructured.NestedString(managedObject(ctx, g, c).Object, fields...)
	g.Expect(v).NotTo(BeEmpty(), "%s of %s", strings.Join(fields, "."), c)
	return v
}

// expectRDS finds, through the AWS API, the DB instance a connection Secret points at,
// and checks it is what the claim asked for.
func expectRDS(ctx context.Context, g Gomega, moto *framework.Moto, s *corev1.Secret, engine, version string) {
	out, err := moto.Call(ctx, "rds", "describe_db_instances", nil)
	g.Expect(err).NotTo(HaveOccurred())
	var found map[string]any
	for _, i := range out["DBInstances"].([]any) {
		db := i.(map[string]any)
		if db["Endpoint"].(map[string]any)["Address"] == string(s.Data["endpoint"]) {
			found = db
		}
	}
	g.Expect(found).NotTo(BeNil(), "no DB instance at %s", s.Data["endpoint"])
	g.Expect(found).To(And(HaveKeyWithValue("Engine", engine), HaveKeyWithValue("DBName", string(s.Data["database"])),
		HaveKeyWithValue("MasterUsername", string(s.Data["username"])), HaveKeyWithValue("EngineVersion", HavePrefix(version)),
		HaveKeyWithValue("AllocatedStorage", BeNumerically("==", 20))))
	g.Expect(fmt.Sprint(found["Endpoint"].(map[string]any)["Port"])).To(Equal(string(s.Data["port"])))
}

// rdsIdentifier is the DB instance identifier in an RDS endpoint (identifier.xxxx.region.rds.amazonaws.com).
func rdsIdentifier(s *corev1.Secret) string {
	id, _, _ := strings.Cut(string(s.Data["endpoint"]), ".")
	return id
}

func keys(s *corev1.Secret) []string {
	var out []string
	for k := range s.Data {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
