package plugins

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// Methods of protocol 6 that the reads tests call.
const (
	configure6 = "/tfplugin6.Provider/ConfigureProvider"
	read6      = "/tfplugin6.Provider/ReadResource"
	readData6  = "/tfplugin6.Provider/ReadDataSource"
	plan6      = "/tfplugin6.Provider/PlanResourceChange"
	apply6     = "/tfplugin6.Provider/ApplyResourceChange"
	ephemeral6 = "/tfplugin6.Provider/OpenEphemeralResource"
)

// world is a provider whose answers the test changes: each call is answered with its
// method's current answer and the request (an empty answer when it has none), and
// counted.
type world struct {
	mu      sync.Mutex
	answers map[string]string // by method; "fail" answers with an error
	asked   map[string]int
}

func (w *world) serve(_ any, s grpc.ServerStream) error {
	method, _ := grpc.MethodFromServerStream(s)
	var req []byte
	if err := s.RecvMsg(&req); err != nil {
		return err
	}
	w.mu.Lock()
	w.asked[method]++
	answer := w.answers[method]
	w.mu.Unlock()
	if answer == "fail" {
		return status.Error(codes.Unavailable, "the provider failed")
	}
	resp := []byte{} // a configure without diagnostics
	if answer != "" {
		resp = []byte(answer + ":" + string(req))
	}
	return s.SendMsg(&resp)
}

func (w *world) set(method, answer string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.answers[method] = answer
}

func (w *world) count(method string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.asked[method]
}

// TestRereadAnswersAlike: a run's configure and reads are recorded on its own socket;
// asked again, they say whether the provider answers them alike. Any call a repeat
// cannot stand for makes the run's reads unsure.
func TestRereadAnswersAlike(t *testing.T) {
	cases := []struct {
		name   string
		run    []string          // the methods the recorded run calls, in order
		change map[string]string // answers that change before the reads are asked again
		same   bool
		unsure string // part of Unsure's reason, when unsure
		fails  bool
	}{
		{name: "nothing changed", run: []string{configure6, read6, readData6, plan6}, same: true},
		{name: "an object reads otherwise", run: []string{configure6, read6, readData6, plan6}, change: map[string]string{read6: "tagged"}},
		{name: "a data source reads otherwise", run: []string{configure6, read6, readData6}, change: map[string]string{readData6: "newer"}},
		{name: "the provider configures otherwise", run: []string{configure6, read6}, change: map[string]string{configure6: "warning"}},
		{name: "a plan's answer does not count", run: []string{configure6, read6, plan6}, change: map[string]string{plan6: "other"}, same: true},
		{name: "an apply makes the run unsure", run: []string{configure6, read6, plan6, apply6}, unsure: "ApplyResourceChange"},
		{name: "an ephemeral resource makes the run unsure", run: []string{configure6, ephemeral6, read6}, unsure: "OpenEphemeralResource"},
		{name: "a read that fails again is an error", run: []string{configure6, read6}, change: map[string]string{read6: "fail"}, fails: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := &world{answers: map[string]string{configure6: "", read6: "bucket", readData6: "ami", plan6: "planned", apply6: "applied", ephemeral6: "token"}, asked: map[string]int{}}
			p, _ := newTestProxy(t, w.serve, nil)
			reads := NewReads()
			socket := filepath.Join(t.TempDir(), "run.sock")
			stop, err := p.serveRecorded(socket, "registry.terraform.io/hashicorp/aws", reads)
			if err != nil {
				t.Fatal(err)
			}
			defer stop()
			conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			ctx := context.Background()
			for _, m := range tc.run {
				if _, err := invoke(ctx, conn, m, "req-"+filepath.Base(m)); err != nil {
					t.Fatal(err)
				}
			}
			if got := reads.Unsure(); tc.unsure == "" && got != "" || !strings.Contains(got, tc.unsure) {
				t.Fatalf("Unsure() = %q, want %q", got, tc.unsure)
			}
			if tc.unsure != "" {
				return
			}
			configures := w.count(configure6)
			for m, a := range tc.change {
				w.set(m, a)
			}
			if tc.change[configure6] != "" {
				p.configured.known = false // another run configured the process otherwise since
			}
			same, err := p.askAgain(ctx, reads.calls["registry.terraform.io/hashicorp/aws"])
			if (err != nil) != tc.fails || same != tc.same {
				t.Fatalf("askAgain = %v, %v; want same %v, an error %v", same, err, tc.same, tc.fails)
			}
			if tc.change[configure6] == "" && w.count(configure6) != configures {
				t.Error("the provider was configured again with what it was configured with")
			}
			// Every read is asked again when all answer alike; once one differs, the rest
			// may be cancelled, so only the alike cases count them.
			if tc.same && w.count(read6) != 2 {
				t.Errorf("the object was read %d times, want 2 (the run's and the reread's)", w.count(read6))
			}
		})
	}
}

// recordingProcess is a provider process whose reads, asked again, answer same.
type recordingProcess struct {
	fakeProcess
	same  bool
	asked int
}

func (p *recordingProcess) serveRecorded(string, string, *Reads) (func(), error) {
	return func() {}, nil
}

func (p *recordingProcess) askAgain(context.Context, []call) (bool, error) {
	p.asked++
	return p.same, nil
}

// TestRereadProviders: a lease rereads only what its own providers recorded.
func TestRereadProviders(t *testing.T) {
	const aws, random = "registry.terraform.io/hashicorp/aws", "registry.terraform.io/hashicorp/random"
	recorded := func(addresses ...string) *Reads {
		r := NewReads()
		for _, a := range addresses {
			r.add(a, read6, []byte("req"), []byte("resp"))
		}
		return r
	}
	lease := func(same bool, addresses ...string) *Lease {
		l := &Lease{}
		for _, a := range addresses {
			p := &recordingProcess{same: same, fakeProcess: fakeProcess{exited: make(chan struct{})}}
			l.procs, l.addresses = append(l.procs, &process{address: a, handle: p}), append(l.addresses, a)
		}
		return l
	}
	unsure := recorded(aws)
	unsure.doubt(apply6)
	cases := []struct {
		name   string
		reads  *Reads
		answer bool // what the providers say
		same   bool
	}{
		{name: "no provider, nothing read", reads: recorded(), same: true},
		{name: "no provider, reads recorded", reads: recorded(aws)},
		{name: "the same provider answers alike", reads: recorded(aws), answer: true, same: true},
		{name: "the same provider answers otherwise", reads: recorded(aws)},
		{name: "a provider the run did not have", reads: recorded(random), answer: true},
		{name: "a provider the run had and read nothing from", reads: recorded(aws), answer: true, same: true},
		{name: "unsure reads", reads: unsure, answer: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var l *Lease
			switch {
			case strings.HasPrefix(tc.name, "no provider"):
			case strings.Contains(tc.name, "read nothing"):
				l = lease(tc.answer, aws, random)
			default:
				l = lease(tc.answer, aws)
			}
			same, err := l.Reread(context.Background(), tc.reads)
			if err != nil || same != tc.same {
				t.Errorf("Reread = %v, %v; want %v", same, err, tc.same)
			}
		})
	}
}

// servedAt is a provider process that says which address it was asked to serve a run
// under.
type servedAt struct {
	recordingProcess
	address string
}

func (p *servedAt) serveRecorded(_, address string, _ *Reads) (func(), error) {
	p.address = address
	return func() {}, nil
}

// TestRecordUnderTheLentAddress: a process started for one address of its binary (the
// OpenTofu registry's name of a provider) and lent under another (Terraform's) serves
// the run under the address terraform was given, with its reattach settings.
func TestRecordUnderTheLentAddress(t *testing.T) {
	const tofu, hashicorp = "registry.opentofu.org/hashicorp/aws", "registry.terraform.io/hashicorp/aws"
	proc := &servedAt{recordingProcess: recordingProcess{fakeProcess: fakeProcess{exited: make(chan struct{})}}}
	l := &Lease{pool: &Pool{dir: t.TempDir()}, procs: []*process{{address: tofu, handle: proc}}, addresses: []string{hashicorp},
		Reattach: tfexec.ReattachInfo{hashicorp: {Protocol: "grpc", ProtocolVersion: 5, Addr: tfexec.ReattachConfigAddr{Network: "unix", String: "p1.sock"}}}}
	restore, err := l.Record(NewReads())
	if err != nil {
		t.Fatal(err)
	}
	got := l.Reattach[hashicorp]
	if proc.address != hashicorp || got.Addr.Network != "unix" || got.Protocol != "grpc" || got.Addr.String == "p1.sock" || len(l.Reattach) != 1 {
		t.Errorf("served under %q with %+v (all: %v); want %s on a socket of the run's own", proc.address, got, l.Reattach, hashicorp)
	}
	restore()
	if l.Reattach[hashicorp].Addr.String != "p1.sock" {
		t.Errorf("after the run: %+v, want the lease's own socket back", l.Reattach[hashicorp])
	}
}
