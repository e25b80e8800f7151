package engine

import (
	"encoding/json"
	"fmt"

	tfjson "github.com/hashicorp/terraform-json"

	"terraplane.io/terraplane/internal/plandoc"
)

// planDocument is the plan as plan policies see it: terraform's resource_changes, every
// sensitive value (and every value of the workspace's secrets) redacted.
func planDocument(js *tfjson.Plan, secrets map[string]string) ([]byte, error) {
	b, err := json.Marshal(js.ResourceChanges)
	if err != nil {
		return nil, fmt.Errorf("encode plan changes: %w", err)
	}
	var changes []any
	if err := json.Unmarshal(b, &changes); err != nil {
		return nil, fmt.Errorf("read plan changes: %w", err)
	}
	values := make([]string, 0, len(secrets))
	for _, v := range secrets {
		values = append(values, v)
	}
	return plandoc.Redacted(changes, values...)
}
