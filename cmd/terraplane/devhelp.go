package main

import (
	"context"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/internal/kinds"
)

// fleet is what a dev control plane already holds when it starts: its managed resources
// (every claim is met by one) and how many of them are Ready.
type fleet struct {
	resources, ready int
}

// countFleet counts the managed resources of every registered kind; a kind that cannot
// be listed counts as empty.
func countFleet(ctx context.Context, c client.Reader) fleet {
	var f fleet
	for _, k := range kinds.NewRegistry(nil).ManagedKinds() {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List"))
		if err := c.List(ctx, list); err != nil {
			continue
		}
		for i := range list.Items {
			f.resources++
			if conditionTrue(&list.Items[i], "Ready") {
				f.ready++
			}
		}
	}
	return f
}

// state says what the control plane holds, for the help's first line.
func (f fleet) state() string {
	if f.resources == 0 {
		return "Terraplane is running, with nothing applied yet."
	}
	return fmt.Sprintf("Terraplane is running with what it held before: %d managed resource(s), %d of them Ready.", f.resources, f.ready)
}

// printHelp says what to look at: the quickstart's objects when it was applied, what the
// plane holds and the kinds in general otherwise.
func printHelp(w io.Writer, o devOptions, f fleet) {
	kubectl := "kubectl"
	if p, err := devenv.Tool("kubectl"); err == nil {
		kubectl = p
	}
	k := fmt.Sprintf("%s --kubeconfig %s", kubectl, o.kubeconfigOut)
	if o.quickstart == "" {
		fmt.Fprintf(w, `
%[2]s Try:
    %[1]s apply -f examples/quickstart/     (its Provider needs an S3 endpoint: terraplane dev --quickstart starts moto_server, the AWS API emulator)
    %[1]s get claim,managed,class -A
    %[1]s api-resources --categories terraplane
Press Ctrl-C to stop everything.
`, k, f.state())
		return
	}
	fmt.Fprintf(w, `
Terraplane is running. Look around:
    %[1]s get buckets,bucketclasses -A
    %[1]s get s3buckets,s3bucketclasses,providers.aws.terraplane.io -A
    %[1]s describe bucket -n demo quickstart
    %[1]s get secret -n demo quickstart-bucket -o jsonpath='{.data.bucket}' | base64 -d
Delete the claim (reclaimPolicy Delete destroys the bucket):
    %[1]s delete bucket -n demo quickstart
Press Ctrl-C to stop everything.
`, k)
}
