package stackpkg

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// checkPodSpec refuses a controller that asks for more of the node than a controller
// needs: host namespaces, host paths, privileged or privilege-escalating containers,
// added capabilities, or its own ServiceAccount (the manager assigns one).
func checkPodSpec(p *corev1.PodSpec) error {
	var bad []string
	if p.HostNetwork || p.HostPID || p.HostIPC {
		bad = append(bad, "host namespaces (hostNetwork, hostPID, hostIPC)")
	}
	if p.ServiceAccountName != "" || p.DeprecatedServiceAccount != "" {
		bad = append(bad, "its own serviceAccountName")
	}
	for _, v := range p.Volumes {
		if v.HostPath != nil {
			bad = append(bad, fmt.Sprintf("hostPath volume %q", v.Name))
		}
	}
	for _, c := range append(append([]corev1.Container{}, p.InitContainers...), p.Containers...) {
		sc := c.SecurityContext
		if sc == nil {
			continue
		}
		if sc.Privileged != nil && *sc.Privileged {
			bad = append(bad, fmt.Sprintf("privileged container %q", c.Name))
		}
		if sc.AllowPrivilegeEscalation != nil && *sc.AllowPrivilegeEscalation {
			bad = append(bad, fmt.Sprintf("privilege escalation in container %q", c.Name))
		}
		if sc.Capabilities != nil && len(sc.Capabilities.Add) > 0 {
			bad = append(bad, fmt.Sprintf("added capabilities in container %q", c.Name))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: install.yaml asks for %s", ErrUnsafe, strings.Join(bad, ", "))
	}
	return nil
}
