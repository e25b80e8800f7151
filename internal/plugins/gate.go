package plugins

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"terraplane.io/terraplane/internal/plandoc"

	"github.com/hashicorp/terraform-exec/tfexec"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
)

// PlannedCreate is one resource instance that a run's plan creates, as its provider
// planned it, in terraform's plan JSON form.
type PlannedCreate struct {
	// Address is the instance's address, when known (the gate knows only its type).
	Address string
	// Provider is the provider's address; Type the resource type.
	Provider, Type string
	// After is the planned value; AfterUnknown marks what is known only once applied,
	// AfterSensitive what the provider's schema marks sensitive.
	After, AfterUnknown, AfterSensitive any
}

// CreateCheck is asked once, before the first change of a run reaches a provider,
// whether the run's planned creates may be applied: creates are the provider's plans
// in the order they came (terraform plans each again just before it applies it, so the
// last may be such a repeat). secrets are the texts the run's data sources read that
// their schemas mark sensitive. An error refuses every change
// of the run, which then makes nothing.
type CreateCheck func(ctx context.Context, creates []PlannedCreate, secrets []string) error

// gater is a provider process that can serve one run on a socket of its own, with the
// run's changes held until its check answers.
type gater interface {
	serveGated(socket string, g *runGate) (stop func(), err error)
}

// Gate has terraform reach the lease's processes, for one run, through sockets of
// their own, where check sees the run's planned creates before its first change goes
// to a provider; restore ends that and gives the lease its own sockets back. It fails
// when a provider of the run is not the pool's, or cannot hold changes.
func (l *Lease) Gate(check CreateCheck) (restore func(), err error) {
	g := &runGate{check: check}
	return l.serveOwn("g", func(proc *process, address, socket string) (func(), error) {
		gp, ok := proc.handle.(gater)
		if !ok {
			return nil, errors.New("a provider process that cannot hold a run's changes")
		}
		return gp.serveGated(socket, g.forProvider(address))
	})
}

// serveOwn has terraform reach each of the lease's processes, for one run, through a
// socket of its own (named with prefix) that serve starts serving for the address the
// process is lent under; restore stops them and gives the lease its own sockets back.
func (l *Lease) serveOwn(prefix string, serve func(proc *process, address, socket string) (stop func(), err error)) (restore func(), err error) {
	if l == nil || len(l.procs) == 0 || len(l.procs) != len(l.Reattach) || len(l.procs) != len(l.addresses) {
		return nil, errors.New("the run's providers are not the provider pool's")
	}
	own := l.Reattach
	var stops []func()
	restore = func() {
		for _, stop := range stops {
			stop()
		}
		l.Reattach = own
	}
	served := make(tfexec.ReattachInfo, len(own))
	next := l.pool.gates.Add(1)
	for i, proc := range l.procs {
		socket := filepath.Join(l.pool.dir, fmt.Sprintf("%s%d-%d.sock", prefix, next, i))
		address := l.addresses[i]
		rc, ok := own[address]
		if !ok {
			restore()
			return nil, fmt.Errorf("the run's provider %s is not the pool's", address)
		}
		stop, err := serve(proc, address, socket)
		if err != nil {
			restore()
			return nil, fmt.Errorf("serve a run on its own socket: %w", err)
		}
		stops = append(stops, stop)
		rc.Addr.String = socket
		served[address] = rc
	}
	l.Reattach = served
	return restore, nil
}

// runGate holds one run's changes until its planned creates are checked.
type runGate struct {
	check CreateCheck
	// provider is the address of the provider a per-provider copy serves.
	provider string
	shared   *gateState
}

// gateState is what the copies of one run's gate share.
type gateState struct {
	mu      sync.Mutex
	creates []PlannedCreate
	secrets []string
	problem error // a change that is not a create, or could not be read
	decided bool
	once    sync.Once
	verdict error
}

// forProvider is g as the provider at address serves it.
func (g *runGate) forProvider(address string) *runGate {
	if g.shared == nil {
		g.shared = &gateState{}
	}
	return &runGate{check: g.check, provider: address, shared: g.shared}
}

// record adds a planned create, or the problem with one, before the run's verdict.
func (g *runGate) record(c *PlannedCreate, secrets []string, problem error) {
	s := g.shared
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.decided {
		return // terraform plans each change again as it applies it
	}
	if c != nil {
		s.creates = append(s.creates, *c)
	}
	s.secrets = append(s.secrets, secrets...)
	if s.problem == nil {
		s.problem = problem
	}
}

// decide is the run's verdict, asked of the check once: the first change waits for it,
// and every change gets it.
func (g *runGate) decide(ctx context.Context) error {
	s := g.shared
	s.once.Do(func() {
		s.mu.Lock()
		s.decided = true
		creates, secrets, problem := s.creates, s.secrets, s.problem
		s.mu.Unlock()
		if problem != nil {
			s.verdict = problem
			return
		}
		s.verdict = g.check(ctx, creates, secrets)
	})
	return s.verdict
}

// serveGated serves one run on socket as the proxy serves every run, but for its
// planned changes, which g records, and its changes, which wait for g's verdict.
func (p *proxy) serveGated(socket string, g *runGate) (func(), error) {
	handler := func(srv any, in grpc.ServerStream) error {
		method, ok := grpc.MethodFromServerStream(in)
		if !ok {
			return status.Error(codes.Internal, "no method")
		}
		switch path.Base(method) {
		case "PlanResourceChange":
			return p.planGated(in, method, g)
		case "ReadDataSource":
			return p.readGated(in, method, g)
		case "ApplyResourceChange":
			if err := g.decide(in.Context()); err != nil {
				return refuse(in, err)
			}
		}
		return p.forward(srv, in)
	}
	return p.serveOn(socket, handler)
}

// planGated relays a PlanResourceChange call and records what it plans.
func (p *proxy) planGated(in grpc.ServerStream, method string, g *runGate) error {
	req, resp, err := p.relayUnary(in, method)
	if err != nil {
		return err
	}
	c, problem := p.plannedCreate(in.Context(), method, req, resp)
	if c != nil {
		c.Provider = g.provider
	}
	g.record(c, nil, problem)
	return in.SendMsg(&resp)
}

// readGated relays a ReadDataSource call and records the sensitive texts it read.
func (p *proxy) readGated(in grpc.ServerStream, method string, g *runGate) error {
	req, resp, err := p.relayUnary(in, method)
	if err != nil {
		return err
	}
	secrets, problem := p.readSecrets(in.Context(), method, req, resp)
	g.record(nil, secrets, problem)
	return in.SendMsg(&resp)
}

// relayUnary passes one unary call on to the provider and returns its request and
// answer; the answer is the caller's to send.
func (p *proxy) relayUnary(in grpc.ServerStream, method string) (req, resp []byte, err error) {
	if err := in.RecvMsg(&req); err != nil {
		return nil, nil, err
	}
	ctx, done := p.calls.start(in.Context())
	defer done()
	resp, err = p.invoke(ctx, method, req)
	return req, resp, err
}

// Field numbers of the messages the gate reads, the same in protocols 5 and 6.
const (
	fieldTypeName     protowire.Number = 1 // of a PlanResourceChange or ReadDataSource request
	fieldPriorState   protowire.Number = 2 // of a PlanResourceChange request
	fieldPlannedState protowire.Number = 1 // of a PlanResourceChange answer
	fieldReadState    protowire.Number = 1 // of a ReadDataSource answer
	fieldResources    protowire.Number = 2 // of a schema answer: resource schemas
	fieldDataSources  protowire.Number = 3 // of a schema answer: data source schemas
	fieldApplyDiags   protowire.Number = 3 // of an ApplyResourceChange answer
)

// plannedCreate reads a PlanResourceChange call: the create it plans, or why it is
// not one the gate can pass (a change to something that exists, or a value it cannot read).
func (p *proxy) plannedCreate(ctx context.Context, method string, req, resp []byte) (*PlannedCreate, error) {
	typeName := string(field(req, fieldTypeName))
	block, err := p.schemaOf(ctx, method, fieldResources, typeName)
	if err != nil {
		return nil, err
	}
	ty := block.impliedType()
	prior, err := decodeValue(field(req, fieldPriorState), ty)
	if err != nil {
		return nil, fmt.Errorf("read the prior state of a %s: %w", typeName, err)
	}
	if !prior.IsNull() {
		return nil, fmt.Errorf("a %s exists already: its change is not a create", typeName)
	}
	planned, err := decodeValue(field(resp, fieldPlannedState), ty)
	if err != nil {
		return nil, fmt.Errorf("read the planned %s: %w", typeName, err)
	}
	if planned.IsNull() {
		return nil, nil // the provider reported a problem, which terraform shows
	}
	after, unknown := jsonValue(planned)
	return &PlannedCreate{Type: typeName, After: after, AfterUnknown: unknown, AfterSensitive: block.sensitiveMask(planned)}, nil
}

// readSecrets reads a ReadDataSource call's answer: the texts its schema marks sensitive.
func (p *proxy) readSecrets(ctx context.Context, method string, req, resp []byte) ([]string, error) {
	typeName := string(field(req, fieldTypeName))
	block, err := p.schemaOf(ctx, method, fieldDataSources, typeName)
	if err != nil {
		return nil, err
	}
	v, err := decodeValue(field(resp, fieldReadState), block.impliedType())
	if err != nil || v.IsNull() {
		return nil, err
	}
	known, _ := jsonValue(v)
	found := map[string]bool{}
	plandoc.CollectSecrets(known, block.sensitiveMask(v), false, found)
	return slices.Collect(maps.Keys(found)), nil
}

// schemaOf is the schema of typeName, a resource or data source type (kind: the field
// of the schema answer), of the provider that serves method.
func (p *proxy) schemaOf(ctx context.Context, method string, kind protowire.Number, typeName string) (*schemaBlock, error) {
	protocol := 5
	if strings.HasPrefix(method, "/tfplugin6.") {
		protocol = 6
	}
	sm := schemaMethod(protocol)
	answer, err := p.pure.answer(ctx, sm, []byte{}, func() ([]byte, error) { return p.invoke(ctx, sm, []byte{}) })
	if err != nil {
		return nil, fmt.Errorf("read the provider's schema: %w", err)
	}
	block, ok, err := typeSchema(answer, kind, typeName)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("the provider's schema has no %s", typeName)
	}
	return block, nil
}

// refuse answers an ApplyResourceChange call with an error diagnostic: the change is
// not made.
func refuse(in grpc.ServerStream, verdict error) error {
	var req []byte
	if err := in.RecvMsg(&req); err != nil {
		return err
	}
	var diag []byte
	diag = protowire.AppendTag(diag, 1, protowire.VarintType)
	diag = protowire.AppendVarint(diag, 1) // ERROR
	diag = protowire.AppendTag(diag, 2, protowire.BytesType)
	diag = protowire.AppendString(diag, "Change held for its plan's check")
	diag = protowire.AppendTag(diag, 3, protowire.BytesType)
	diag = protowire.AppendString(diag, verdict.Error())
	var resp []byte
	resp = protowire.AppendTag(resp, fieldApplyDiags, protowire.BytesType)
	resp = protowire.AppendBytes(resp, diag)
	return in.SendMsg(&resp)
}

// field is the value of the first length-delimited field num of msg; nil when absent.
func field(msg []byte, num protowire.Number) []byte {
	var out []byte
	found := false
	_ = eachField(msg, func(n protowire.Number, v []byte) error {
		if n == num && !found {
			out, found = v, true
		}
		return nil
	})
	return out
}
