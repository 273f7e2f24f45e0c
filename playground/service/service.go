// Package service answers every question the product asks of the NCCL
// model: the built-in systems, a system's topology and searched graphs,
// NCCL's tuning table and choice per size, the time of one collective, a
// DDP / FSDP2 step, the estimator's error on the published runs, a log
// diagnosis and the tuner-plugin export. Each question has a typed request
// and a typed result (Go structs with json tags, encoded with
// encoding/json by ncclsim and, byte for byte the same, by package jsonenc
// for the browser: see Answer); the service owns input validation and its messages, the
// defaults, the pipeline (model.Build, cached per input), the result
// shapes and the equivalent ncclsim command line (Command).
//
// Three thin callers sit on it: the ncclsim CLI (flags in, text or the
// result's JSON out), the js/wasm adapter (one binary per page under
// playground/wasm: JavaScript values in, an Answer* method out) and the
// generator's static no-JavaScript views (generator/build renders the page
// answers' figures and tables into each playground page). The page answers
// (TopoPage, TunePage, ...) wrap the CLI's result with what a page draws
// besides: figures (package figure) and series for the interactive parts.
//
// A Service keeps parsed topologies and built models between calls, so that
// changing only the collective or the drawn channel does not search again.
// It is not safe for concurrent use.
//
// To add a question: a request type (or fields on Request), a result type
// with json tags, a method on Service that validates with FieldError, and,
// for the browser, an Answer* method, a case in Answer and a main under
// playground/wasm that registers it.
package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/distributed-nav/distributed-nav/playground/estimate"
	"github.com/distributed-nav/distributed-nav/playground/jsonenc"
	"github.com/distributed-nav/distributed-nav/playground/model"
	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/presets"
	"github.com/distributed-nav/distributed-nav/playground/topo"
)

// Input limits. A topology dump of a real 8-GPU host is 10-60 KB; anything
// beyond MaxXMLBytes is refused before parsing.
const (
	MaxXMLBytes  = 2 << 20 // 2 MiB
	MaxEnvVars   = 64
	MaxEnvLen    = 4096 // bytes per NAME=VALUE
	MaxNodes     = topo.MaxHosts
	MaxTextBytes = 4 << 20 // doctor logs
	// MaxNCCLTestsBytes bounds the nccl-tests output pasted on the
	// estimator page (a results table with its console log fits many
	// times over).
	MaxNCCLTestsBytes = 2 << 20
	defaultWait       = 60 * time.Second
	// The doctor's inputs in the browser (the CLI streams a log of any
	// size and reads at most MaxEnvFileBytes of an environment file, the
	// page's limit too: a real listing or nccl.conf is a few KB, and 100,000
	// made-up names of 1.5 MB cost the checks 2 s and 176 MB).
	MaxLogBytes     = 8 << 20
	MaxEnvDumpSize  = 1 << 20
	MaxEnvFileBytes = MaxEnvDumpSize
	maxHostCache    = 32
	maxModelCache   = 32
)

// FieldError is a problem with one input; Field names it ("preset", "xml",
// "nodes", "p2p", "env", "coll", "bytes", "dtype", ...) and Name, for env,
// the variable, so that the page can show the message next to the control.
type FieldError struct {
	Field   string `json:"field"`
	Name    string `json:"name,omitempty"`
	Message string `json:"message"`
	// Problems, for Field "env", lists everything ncclenv.Validate found
	// (ncclsim prints them all); the page shows Message.
	Problems []ncclenv.Problem `json:"-"`
	// Warnings are the topology's warnings when the system parsed before
	// the error (ncclsim prints them above the error: they often say why);
	// the page shows them with the system it drew.
	Warnings []topo.Warning `json:"-"`
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
	// NCCLTests, on the estimator page, is the user's nccl-tests output
	// (at most MaxNCCLTestsBytes): compared as `ncclsim compare` does and
	// drawn over the curves; empty for none.
	NCCLTests string
	// Graph and Channel select the channels the topology figure draws.
	Graph   string
	Channel int
	// Timeout bounds the graph search (0: 60 s). Progress, when set, is
	// called at most every 100 ms during the search with the number of
	// cancellation polls so far (a measure of work done, not a fraction).
	Timeout  time.Duration
	Progress func(steps int64)
	// Full asks for every item of the lists that are summarised by default
	// on large inputs: the GPU pairs of a host over topo.MaxListedGPUs GPUs
	// (ncclsim --full).
	Full bool
}

// Service answers the questions; it caches parsed hosts and built models.
// It is not safe for concurrent use (the wasm adapter calls it from one
// goroutine at a time).
type Service struct {
	// Calibration, when set, replaces the calibrated estimator's built-in
	// parameters (ncclsim --calibration FILE).
	Calibration *estimate.Calibration

	cal     *estimate.Calibration
	sets    []*estimate.Dataset
	presets []presets.Preset
	hosts   []*hostEntry
	models  []*built
}

// New returns a service with empty caches.
func New() *Service { return &Service{} }

type hostEntry struct {
	key   string
	xml   string
	sys   *topo.System
	warns []topo.Warning
	name  string
	desc  string
}

// built is one pipeline run: model.Search always, the tuning model when
// the environment allows it (tuneErr otherwise).
type built struct {
	key      string
	host     *hostEntry
	nodes    int
	env      ncclenv.Env
	problems []ncclenv.Problem
	res      *model.Result
	tuneErr  error
	elapsed  time.Duration
	est      map[estimate.Fabric]*estimate.System
}

// host returns the parsed single-host system the request names.
func (s *Service) host(req *Request) (*hostEntry, error) {
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
		list, err := s.presetList()
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
			return nil, fieldErr("preset", "unknown preset "+strconv.Quote(clipInput(req.Preset))+" (available: "+strings.Join(names, ", ")+")")
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
			return env, problems, &FieldError{Field: "env", Name: p.Name, Message: msg, Problems: problems}
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
func (s *Service) build(ctx context.Context, req *Request) (*built, error) {
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
	wait := req.Timeout
	if wait <= 0 {
		wait = defaultWait
	}
	t0 := time.Now()
	sctx := &stepCtx{Context: ctx, progress: req.Progress, deadline: t0.Add(wait), last: t0}
	res, err := model.Search(sctx, host, nodes, env)
	if err != nil {
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			field := "nodes" // the page has no timeout of its own; more nodes take longer
			if req.Timeout > 0 {
				field = "timeout"
			}
			return nil, fieldErr(field, "the graph search did not finish within "+wait.String())
		case errors.Is(err, context.Canceled):
			return nil, err
		case strings.Contains(err.Error(), "replicate"):
			return nil, fieldErr("nodes", err.Error())
		}
		field := sourceField(req)
		if p2p != "auto" && strings.Contains(err.Error(), "P2P") {
			field = "p2p" // the P2P support the user chose contradicts the topology
		}
		msg := strings.TrimPrefix(err.Error(), "model: ")
		msg = strings.TrimPrefix(msg, "analyse topology: ")
		return nil, fieldErr(field, msg)
	}
	b := &built{key: key, host: h, nodes: nodes, env: env, problems: problems, res: res}
	b.tuneErr = res.AddTuning(env)
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
	var fe *FieldError
	if !errors.As(err, &fe) {
		fe = &FieldError{Message: err.Error()}
	}
	b, jerr := jsonenc.Marshal(struct {
		Error *FieldError `json:"error"`
	}{fe})
	if jerr != nil {
		return `{"error":{"field":"","message":"internal error: cannot encode the error"}}`
	}
	return string(b)
}

// Reply is one page answer as the browser takes it: JSON text with the
// numbers, and the figures (SVG or HTML markup) by name. The figures
// travel beside the JSON, not inside it, so that hundreds of kilobytes of
// markup are not escaped into a string and parsed back.
type Reply struct {
	JSON    string
	Figures []Figure
}

// Figure is one named piece of markup from package figure.
type Figure struct {
	Name, Markup string
}

// Figure returns the markup of the named figure, or "".
func (r Reply) Figure(name string) string { return figureOf(r.Figures, name) }

// ErrorJSON renders err as the JSON error object every page answer is on
// failure: {"error":{"field":..., "name":..., "message":...}}.
func ErrorJSON(err error) string { return errorJSON(err) }

// Page questions, as Answer takes them.
const (
	PageTopo      = "topo"
	PageTune      = "tune"
	PageEstimate  = "estimate"
	PageEstimator = "estimator"
	PageStep      = "step"
)

// Answer answers one page question for req as a Reply: the typed page
// answer (TopoPage, TunePage, EstimatePage, EstimatorPage, StepPage)
// encoded as encoding/json encodes it, or the error object. The encoder is
// package jsonenc, which writes the same bytes without linking
// encoding/json into the wasm (about 80 KB gzip per binary);
// TestRepliesMatchEncodingJSON holds the two equal on every preset. Each question is also
// its own method (AnswerTopo, ...), so that a caller that needs only some
// of them (a wasm binary of one page) links only those.
func (s *Service) Answer(ctx context.Context, question string, req *Request) Reply {
	switch question {
	case PageTopo:
		return s.AnswerTopo(ctx, req)
	case PageTune:
		return s.AnswerTune(ctx, req)
	case PageEstimate:
		return s.AnswerEstimate(ctx, req)
	case PageEstimator:
		return s.AnswerEstimator(ctx, req)
	case PageStep:
		return s.AnswerStep(ctx, req)
	}
	return reply(nil, nil, fieldErr("", "unknown question \""+question+"\""))
}

// AnswerTopo answers the topology page (PageTopo).
func (s *Service) AnswerTopo(ctx context.Context, req *Request) Reply {
	p, err := s.TopoPage(ctx, req)
	return pageReply(p, err, func() []Figure { return p.Figures })
}

// AnswerTune answers the algorithms page (PageTune).
func (s *Service) AnswerTune(ctx context.Context, req *Request) Reply {
	p, err := s.TunePage(ctx, req)
	return pageReply(p, err, func() []Figure { return p.Figures })
}

// AnswerEstimate answers the estimate question (PageEstimate).
func (s *Service) AnswerEstimate(ctx context.Context, req *Request) Reply {
	p, err := s.EstimatePage(ctx, req)
	return reply(p, nil, err)
}

// AnswerEstimator answers the estimator page (PageEstimator).
func (s *Service) AnswerEstimator(ctx context.Context, req *Request) Reply {
	p, err := s.EstimatorPage(ctx, req)
	return pageReply(p, err, func() []Figure { return p.Figures })
}

// AnswerStep answers the step page (PageStep).
func (s *Service) AnswerStep(ctx context.Context, req *Request) Reply {
	p, err := s.StepPage(ctx, req)
	return pageReply(p, err, func() []Figure { return p.Figures })
}

// pageReply encodes a page answer with its figures (read only when err is
// nil), or err.
func pageReply(v any, err error, figures func() []Figure) Reply {
	if err != nil {
		return reply(nil, nil, err)
	}
	return reply(v, figures(), nil)
}

// reply encodes v, or err.
func reply(v any, figs []Figure, err error) Reply {
	if err != nil {
		return Reply{JSON: errorJSON(err)}
	}
	b, err := jsonenc.Marshal(v)
	if err != nil {
		return Reply{JSON: errorJSON(fmt.Errorf("encode the answer: %w", err))}
	}
	return Reply{JSON: string(b), Figures: figs}
}

// jsonNumber formats v as encoding/json writes a float64 (bits 64) or a
// float32 (bits 32); figures carry the same spelling as the JSON.
func jsonNumber(v float64, bits int) string {
	if bits == 32 {
		v = float64(float32(v))
	}
	b, err := jsonenc.AppendFloat(nil, v, bits)
	if err != nil {
		return "null" // NaN and infinities have no JSON spelling
	}
	return string(b)
}
