package cluster

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// removeKubeChains removes what kube-proxy --cleanup leaves of the node's iptables: the
// kubelet's chains (KUBE-FIREWALL, KUBE-KUBELET-CANARY, KUBE-IPTABLES-HINT) and any other
// KUBE- chain, with the rules of the built-in chains that jump to them, in IPv4 and IPv6.
func removeKubeChains() error {
	var errs []error
	for _, bin := range []string{"iptables", "ip6tables"} {
		if _, err := exec.LookPath(bin); err != nil {
			continue
		}
		for _, table := range []string{"filter", "nat", "mangle"} {
			out, err := exec.Command(bin, "-w", "-t", table, "-S").Output()
			if err != nil {
				continue // a table the kernel lacks
			}
			jumps, chains := kubeRules(string(out))
			var cmds [][]string
			for _, r := range jumps {
				cmds = append(cmds, append([]string{"-D"}, r...))
			}
			for _, c := range chains {
				cmds = append(cmds, []string{"-F", c})
			}
			for _, c := range chains {
				cmds = append(cmds, []string{"-X", c})
			}
			for _, c := range cmds {
				args := append([]string{"-w", "-t", table}, c...)
				if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
					errs = append(errs, fmt.Errorf("%s %s: %v: %s", bin, strings.Join(args, " "), err, strings.TrimSpace(string(out))))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// kubeRules reads `iptables -S`: the rules of chains not named KUBE-* that jump to a
// KUBE- chain (as arguments after -A), and the KUBE- chains.
func kubeRules(listing string) (jumps [][]string, chains []string) {
	for _, line := range strings.Split(listing, "\n") {
		f := splitRule(line)
		switch {
		case len(f) == 2 && f[0] == "-N" && strings.HasPrefix(f[1], "KUBE-"):
			chains = append(chains, f[1])
		case len(f) > 2 && f[0] == "-A" && !strings.HasPrefix(f[1], "KUBE-") && jumpsToKube(f):
			jumps = append(jumps, f[1:])
		}
	}
	return jumps, chains
}

func jumpsToKube(f []string) bool {
	for i := 0; i+1 < len(f); i++ {
		if (f[i] == "-j" || f[i] == "-g") && strings.HasPrefix(f[i+1], "KUBE-") {
			return true
		}
	}
	return false
}

// splitRule splits a line of `iptables -S` into arguments; double quotes group words
// (comments), and \" is a quote inside them.
func splitRule(line string) []string {
	var out []string
	var cur strings.Builder
	inQuote, have := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\' && inQuote && i+1 < len(line) && line[i+1] == '"':
			cur.WriteByte('"')
			i++
		case c == '"':
			inQuote, have = !inQuote, true
		case c == ' ' && !inQuote:
			if have {
				out = append(out, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteByte(c)
			have = true
		}
	}
	if have {
		out = append(out, cur.String())
	}
	return out
}
