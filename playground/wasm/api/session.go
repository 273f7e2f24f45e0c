// Package api is the playground's engine room: it turns a request (a
// preset or a pasted topology XML, a node count, NCCL environment
// variables, a collective) into the answers the browser shows, as JSON text
// whose numbers equal those of `ncclsim ... --json`, plus the figures
// (package figure) and the equivalent ncclsim command line.
//
// It is plain Go with no syscall/js and no encoding/json (JSON is written by
// hand) so that it is tested natively and stays small in the wasm binary;
// playground/wasm is the thin js/wasm adapter over it. A Session keeps
// parsed topologies and built models between calls, so that changing only
// the collective or the drawn channel does not search again.
package api

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/distributed-nav/distributed-nav/playground/estimate"
	"github.com/distributed-nav/distributed-nav/playground/graph"
	"github.com/distributed-nav/distributed-nav/playground/model"
	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/presets"
	"github.com/distributed-nav/distributed-nav/playground/topo"
	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// Input limits. A topology dump of a real 8-GPU host is 10-60 KB; anything
// beyond MaxXMLBytes is refused before parsing.
const (
	MaxXMLBytes   = 2 << 20 // 2 MiB
	MaxEnvVars    = 64
	MaxEnvLen     = 4096 // bytes per NAME=VALUE
	MaxNodes      = topo.MaxHosts
	MaxTextBytes  = 4 << 20 // doctor logs
	defaultWait   = 60 * time.Second
	maxHostCache  = 32
	maxModelCache = 32
)

// FieldError is a problem with one input; Field names it ("preset", "xml",
// "nodes", "p2p", "env", "coll", "bytes", "dtype", ...) and Name, for env,
// the variable, so that the page can show the message next to the control.
type FieldError struct {
	Field   string
	Name    string
	Message string
}

// Error implements error.
func (e *FieldError) Error() string {
	if e.Name != "" {
		return e.Field + " " + e.Name + ": " + e.Message
	}
	return e.Field + ": " + e.Message
}

func fieldErr(field, msg string) error { return &FieldError{Field: field, Message: msg} }

// Request is one question from the page. The zero values mean what the
// ncclsim flags default to (one node, P2P from the topology, an empty
// environment, AllReduce).
type Request struct {
	// Preset names a built-in system; XML, when Preset is empty, is a
	// topology as NCCL_TOPO_DUMP_FILE writes it.
	Preset string
	XML    string
	// XMLName is the file name the command line refers to for XML.
	XMLName string
	Nodes   int
	// P2P is "auto", "all", "none" or "nvlink" (ncclsim --p2p).
	P2P string
	// Env holds NAME=VALUE assignments.
	Env []string
	// Coll is the collective ("allreduce", ...), Bytes a size such as
	// "64M", Dtype an element type.
	Coll, Bytes, Dtype string
	// Fabric is the network between nodes for the calibrated estimator
	// ("auto", "rdma" or "tcp"; ncclsim --fabric).
	Fabric string
	// Step holds the inputs of a DDP / FSDP2 step projection.
	Step StepInputs
	// Graph and Channel select the channels the topology figure draws.
	Graph   string
	Channel int
	// Timeout bounds the graph search (0: 60 s). Progress, when set, is
	// called at most every 100 ms during the search with the number of
	// cancellation polls so far (a measure of work done, not a fraction).
	Timeout  time.Duration
	Progress func(steps int64)
}

// Session caches parsed hosts and built models. It is not safe for
// concurrent use (the wasm adapter calls it from one goroutine at a time).
type Session struct {
	cal     *estimate.Calibration
	sets    []*estimate.Dataset
	presets []presets.Preset
	hosts   []*hostEntry
	models  []*built
}

// NewSession returns an empty session.
func NewSession() *Session { return &Session{} }

type hostEntry struct {
	key   string
	xml   string
	sys   *topo.System
	warns []topo.Warning
	name  string
	desc  string
}

// built is one pipeline run: the topology, the search and (if the
// environment allows) the tuning model.
type built struct {
	key      string
	host     *hostEntry
	nodes    int
	env      ncclenv.Env
	problems []ncclenv.Problem
	analysis *topo.Analysis
	search   *graph.Result
	tune     *tune.Model
	tuneErr  error
	notes    []string // the tuning pipeline's notes (model.Build)
	elapsed  time.Duration
	est      map[estimate.Fabric]*estimate.System
}

// result returns the model.Result view the figure package reads.
func (b *built) result() *model.Result {
	return &model.Result{System: b.analysis.System, Analysis: b.analysis, Search: b.search, Tune: b.tune, Notes: b.notes}
}

// Presets returns the built-in systems (parsed once per session).
func (s *Session) Presets() ([]presets.Preset, error) {
	if s.presets == nil {
		list, err := presets.List()
		if err != nil {
			return nil, err
		}
		s.presets = list
	}
	return s.presets, nil
}

// host returns the parsed single-host system the request names.
func (s *Session) host(req *Request) (*hostEntry, error) {
	var key string
	switch {
	case req.Preset != "" && req.XML != "":
		return nil, fieldErr("xml", "give a preset or a topology XML, not both")
	case req.Preset != "":
		key = "preset:" + req.Preset
	case req.XML != "":
		if len(req.XML) > MaxXMLBytes {
			return nil, fieldErr("xml", "the topology XML is "+strconv.Itoa(len(req.XML))+" bytes; the limit is "+strconv.Itoa(MaxXMLBytes)+" (a real dump is well under 100 KB)")
		}
		key = "xml"
	default:
		return nil, fieldErr("preset", "choose a preset or paste a topology XML")
	}
	for _, h := range s.hosts {
		if h.key == key && (key != "xml" || h.xml == req.XML) {
			return h, nil
		}
	}
	h := &hostEntry{key: key}
	if req.Preset != "" {
		list, err := s.Presets()
		if err != nil {
			return nil, err
		}
		var names []string
		found := false
		for _, p := range list {
			names = append(names, p.Name)
			if p.Name == req.Preset {
				found = true
				h.name, h.desc = p.Name, p.Description
				sys, warns, err := p.System()
				if err != nil {
					return nil, err
				}
				h.sys, h.warns = sys, warns
			}
		}
		if !found {
			return nil, fieldErr("preset", "unknown preset \""+req.Preset+"\" (available: "+strings.Join(names, ", ")+")")
		}
	} else {
		sys, warns, err := topo.ParseXML(bytes.NewReader([]byte(req.XML)))
		if err != nil {
			return nil, &FieldError{Field: "xml", Message: err.Error()}
		}
		h.xml, h.sys, h.warns = req.XML, sys, warns
		h.name = req.XMLName
		if h.name == "" {
			h.name = "topology.xml"
		}
		h.desc = sys.Description
		// Keep one pasted topology at a time.
		for i := 0; i < len(s.hosts); i++ {
			if s.hosts[i].key == "xml" {
				s.hosts = append(s.hosts[:i], s.hosts[i+1:]...)
				i--
			}
		}
	}
	if len(s.hosts) >= maxHostCache {
		s.hosts = s.hosts[1:]
	}
	s.hosts = append(s.hosts, h)
	return h, nil
}

// parseEnv checks the assignments and validates them as NCCL reads them.
// Unknown names and unparsable values are errors tied to the variable;
// warnings (deprecated names, clamped values) are returned as problems.
func parseEnv(list []string) (ncclenv.Env, []ncclenv.Problem, error) {
	if len(list) > MaxEnvVars {
		return ncclenv.Env{}, nil, fieldErr("env", "too many variables ("+strconv.Itoa(len(list))+"; the limit is "+strconv.Itoa(MaxEnvVars)+")")
	}
	var clean []string
	for _, a := range list {
		if strings.TrimSpace(a) == "" {
			continue
		}
		if len(a) > MaxEnvLen {
			return ncclenv.Env{}, nil, fieldErr("env", "an assignment is "+strconv.Itoa(len(a))+" bytes long; the limit is "+strconv.Itoa(MaxEnvLen))
		}
		clean = append(clean, a)
	}
	env, err := ncclenv.ParseAssignments(clean)
	if err != nil {
		return ncclenv.Env{}, nil, fieldErr("env", err.Error())
	}
	problems := ncclenv.Validate(env)
	for _, p := range problems {
		if p.Severity == ncclenv.Error {
			msg := p.Name + ": " + p.Message
			if len(p.Suggestions) > 0 {
				msg += " (did you mean " + strings.Join(p.Suggestions, ", ") + "?)"
			}
			return env, problems, &FieldError{Field: "env", Name: p.Name, Message: msg}
		}
	}
	return env, problems, nil
}

// envKey is a canonical spelling of env for cache keys.
func envKey(env ncclenv.Env) string {
	var b strings.Builder
	for _, n := range env.Names() {
		v, _ := env.Lookup(n)
		b.WriteString(n)
		b.WriteByte('=')
		b.WriteString(v)
		b.WriteByte(0)
	}
	return b.String()
}

// stepCtx watches the graph search's cancellation polls (the search asks
// ctx.Err() every few thousand steps): it enforces the deadline itself,
// because inside a synchronous wasm call no timer goroutine can run to
// cancel a context, and it reports progress at most every 100 ms.
type stepCtx struct {
	context.Context
	polls    int64
	progress func(int64)
	deadline time.Time
	last     time.Time
	err      error
}

// Err implements context.Context.
func (c *stepCtx) Err() error {
	if c.err != nil {
		return c.err
	}
	c.polls++
	now := time.Now()
	if c.progress != nil && now.Sub(c.last) >= 100*time.Millisecond {
		c.last = now
		c.progress(c.polls)
	}
	if now.After(c.deadline) {
		c.err = context.DeadlineExceeded
	} else if err := c.Context.Err(); err != nil {
		c.err = err
	}
	return c.err
}

// build runs (or returns the cached) pipeline for req.
func (s *Session) build(ctx context.Context, req *Request) (*built, error) {
	h, err := s.host(req)
	if err != nil {
		return nil, err
	}
	nodes := req.Nodes
	if nodes == 0 {
		nodes = 1
	}
	if nodes < 1 || nodes > MaxNodes {
		return nil, fieldErr("nodes", "want a whole number of nodes from 1 to "+strconv.Itoa(MaxNodes))
	}
	p2p := strings.ToLower(strings.TrimSpace(req.P2P))
	if p2p == "" {
		p2p = "auto"
	}
	var p2pMode topo.P2PSupport
	if p2p != "auto" {
		if p2pMode, err = topo.ParseP2PSupport(p2p); err != nil {
			return nil, fieldErr("p2p", err.Error())
		}
	}
	env, problems, err := parseEnv(req.Env)
	if err != nil {
		return nil, err
	}
	key := h.key + "\x01" + strconv.Itoa(len(h.xml)) + "\x01" + strconv.Itoa(nodes) + "\x01" + p2p + "\x01" + envKey(env)
	for i, m := range s.models {
		if m.key == key && m.host == h {
			// Move to the back (most recently used).
			s.models = append(append(s.models[:i:i], s.models[i+1:]...), m)
			return m, nil
		}
	}
	host := h.sys
	if p2p != "auto" {
		c := *host
		c.P2P = p2pMode
		host = &c
	}
	sys, err := host.Replicate(nodes)
	if err != nil {
		return nil, fieldErr("nodes", err.Error())
	}
	t0 := time.Now()
	a, err := topo.Analyze(sys, env)
	if err != nil {
		field := sourceField(req)
		if p2p != "auto" && strings.Contains(err.Error(), "P2P") {
			field = "p2p" // the P2P support the user chose contradicts the topology
		}
		return nil, fieldErr(field, err.Error())
	}
	wait := req.Timeout
	if wait <= 0 {
		wait = defaultWait
	}
	sctx := &stepCtx{Context: ctx, progress: req.Progress, deadline: time.Now().Add(wait), last: time.Now()}
	sr, err := graph.SearchAll(sctx, a, env)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fieldErr("nodes", "the graph search did not finish within "+wait.String())
		}
		return nil, err
	}
	b := &built{key: key, host: h, nodes: nodes, env: env, problems: problems, analysis: a, search: sr}
	// The tuning half of model.Build, on the search just done.
	opts, err := tune.OptionsFromEnv(env)
	if err == nil {
		ts, tg := model.TuneInputs(sr, a.Local)
		b.tune, err = tune.NewModel(ts, tg, opts)
	}
	if err != nil {
		b.tuneErr = err
	} else {
		b.notes = append([]string(nil), sr.Notes...)
		if sr.NChannels != b.tune.CommNChannels {
			b.notes = append(b.notes, "graph search derived "+strconv.Itoa(sr.NChannels)+" channels, the tuning model "+strconv.Itoa(b.tune.CommNChannels)+"; the tuning model's count is used")
		}
	}
	b.elapsed = time.Since(t0)
	if len(s.models) >= maxModelCache {
		s.models = s.models[1:]
	}
	s.models = append(s.models, b)
	return b, nil
}

// sourceField is the input a topology problem belongs to.
func sourceField(req *Request) string {
	if req.Preset != "" {
		return "preset"
	}
	return "xml"
}

// errorJSON renders err as {"error":{...}}.
func errorJSON(err error) string {
	var w jw
	w.obj()
	w.key("error")
	w.obj()
	var fe *FieldError
	if errors.As(err, &fe) {
		w.kstr("field", fe.Field)
		if fe.Name != "" {
			w.kstr("name", fe.Name)
		}
		w.kstr("message", fe.Message)
	} else {
		w.kstr("field", "")
		w.kstr("message", err.Error())
	}
	w.end()
	w.end()
	return w.String()
}

// Reply is one answer: JSON text with the numbers, and the figures (SVG or
// HTML markup) by name. The figures travel beside the JSON, not inside it,
// so that hundreds of kilobytes of markup are not escaped into a string
// and parsed back.
type Reply struct {
	JSON    string
	Figures []Figure
}

// Figure is one named piece of markup from package figure.
type Figure struct {
	Name, Markup string
}

// Figure returns the markup of the named figure, or "".
func (r Reply) Figure(name string) string {
	for _, f := range r.Figures {
		if f.Name == name {
			return f.Markup
		}
	}
	return ""
}

func errorReply(err error) Reply { return Reply{JSON: errorJSON(err)} }

// ErrorJSON renders err as the JSON error object every call returns on
// failure: {"error":{"field":..., "name":..., "message":...}}.
func ErrorJSON(err error) string { return errorJSON(err) }
