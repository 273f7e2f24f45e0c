//go:build js && wasm

// Package jsapi is the syscall/js glue between the playground pages and
// package service: it reads a request from a JavaScript object (checking
// types and sizes before anything large is copied into Go), calls the
// service, and hands back {json, figures}. A panic below is recovered and
// answered as the error object, so bad input never stops the module.
//
// Each playground page loads its own binary, a main of a few lines that
// registers what the page needs as globalThis.distnav:
//
//	playground/wasm/topology    version, presets() -> JSON, presetXML(name), topo(req)
//	playground/wasm/algorithms  the same with tune(req)
//	playground/wasm/estimator   the same with estimator(req) (built twice: estimator.wasm
//	                            with the tag nopaste, without the paste box, and
//	                            estimator-paste.wasm with it, loaded on a paste)
//	playground/wasm/step        the same with step(req)
//	playground/wasm/doctor      version, presets() -> "[]", doctor({log, env}) (service.AnswerDoctor)
//
// (each question is a service.Answer* method; see service.Answer).
//
// A request is a plain object: {preset | xml, xmlName, nodes, p2p, env:
// ["NAME=VALUE", ...], coll, bytes, dtype, fabric, graph, channel, mode,
// params, bucketCapMb, firstIteration, layers, tensorsPerLayer, forwardMs,
// backwardMs, optimizerMs, reshard, reduceDtype, shardDtype, timing, gpu,
// batch, seqLen, mfu, optimizer, ncclTests (the estimator's pasted
// nccl-tests output), timeoutMs, onProgress(polls)}. A reply is {json, figures: {name: markup}};
// on any failure json is the error object {"error": {"field", "name",
// "message"}}. The pages run the module inside a Web Worker
// (site/assets/js/playground/worker.js) so that long searches never block
// the page.
//
// Each binary links only what its question reaches (the topology page
// does not download the estimator, the estimator page not the step model,
// the doctor page no model at all); generator/sitetest's TestWasmSize holds each to
// the page budget. Of each, the Go runtime with syscall/js is about 570 KB
// gzip (an empty module) and fmt with reflect about 170 KB; the rest is the
// model or doctor and view code and the data compiled in as Go values.
// Answers are encoded by package jsonenc rather than encoding/json, which
// would add about 80 KB to every binary.
package jsapi

import (
	"context"
	"errors"
	"math"
	"runtime"
	"strconv"
	"strings"
	"syscall/js"
	"time"

	"github.com/distributed-nav/distributed-nav/playground/jsonenc"
	"github.com/distributed-nav/distributed-nav/playground/service"
)

// Question answers one page question: a method value of service.Service
// such as s.AnswerTopo. A binary registers only the questions its pages
// ask, and so links only what those reach.
type Question func(context.Context, *service.Request) service.Reply

// Serve is the whole main of a model page's binary: it registers the
// page's question, answer (a method expression such as
// (*service.Service).AnswerTopo), under its name on a new service, and
// keeps the module alive for the page's calls.
func Serve(name string, answer func(*service.Service, context.Context, *service.Request) service.Reply) {
	s := service.New()
	RegisterModel(js.Global(), s, map[string]Question{name: func(ctx context.Context, req *service.Request) service.Reply { return answer(s, ctx, req) }})
	select {}
}

// RegisterModel installs a model page's API as g.distnav and returns it:
// version, presets(), presetXML(name) and one function per question, under
// its name (service.PageTopo, ...). The functions stay alive for the life
// of the module, so they are never released.
func RegisterModel(g js.Value, s *service.Service, questions map[string]Question) js.Value {
	obj := js.Global().Get("Object").New()
	obj.Set("version", service.NCCLVersion)
	obj.Set("presets", js.FuncOf(func(js.Value, []js.Value) any {
		return guard(func() string {
			list, err := s.Presets()
			if err != nil {
				return service.ErrorJSON(err)
			}
			b, err := jsonenc.Marshal(list)
			if err != nil {
				return service.ErrorJSON(err)
			}
			return string(b)
		})
	}))
	obj.Set("presetXML", js.FuncOf(func(_ js.Value, args []js.Value) any {
		return guard(func() string {
			name := argString(args, 0)
			x, err := s.PresetXML(name)
			if err != nil {
				return service.ErrorJSON(err)
			}
			return x
		})
	}))
	call := func(answer Question) js.Func {
		return js.FuncOf(func(_ js.Value, args []js.Value) any {
			return guardReply(func() service.Reply {
				req, err := request(args)
				if err != nil {
					return service.Reply{JSON: service.ErrorJSON(err)}
				}
				return answer(context.Background(), req)
			})
		})
	}
	for name, answer := range questions {
		obj.Set(name, call(answer))
	}
	g.Set("distnav", obj)
	return obj
}

// guard runs f and turns a panic into the error object.
func guard(f func() string) (out string) {
	defer func() {
		if r := recover(); r != nil {
			out = service.ErrorJSON(errors.New("internal error (please report it): " + panicText(r)))
		}
	}()
	return f()
}

// guardReply runs f and converts its reply into a JS object {json,
// figures}; a panic becomes the error object.
func guardReply(f func() service.Reply) (out any) {
	defer func() {
		if r := recover(); r != nil {
			out = replyValue(service.Reply{JSON: service.ErrorJSON(errors.New("internal error (please report it): " + panicText(r)))})
		}
	}()
	return replyValue(f())
}

// replyValue builds the JS object of a reply.
func replyValue(r service.Reply) js.Value {
	o := js.Global().Get("Object").New()
	o.Set("json", r.JSON)
	figs := js.Global().Get("Object").New()
	for _, f := range r.Figures {
		figs.Set(f.Name, f.Markup)
	}
	o.Set("figures", figs)
	return o
}

// textField reads a text member of o, refusing it before the copy when it
// is longer than limit.
func textField(o js.Value, name string, limit int) (string, error) {
	v := o.Get(name)
	switch v.Type() {
	case js.TypeUndefined, js.TypeNull:
		return "", nil
	case js.TypeString:
		if n := strLen(v); n > limit {
			return "", &service.FieldError{Field: name, Message: "the text is " + strconv.Itoa(n) + " characters long; the limit here is " + strconv.Itoa(limit>>20) + " MiB"}
		}
		return v.String(), nil
	}
	return "", &service.FieldError{Field: name, Message: "want text"}
}

// panicText describes a recovered value without fmt.
func panicText(r any) string {
	switch v := r.(type) {
	case runtime.Error:
		return v.Error()
	case error:
		return v.Error()
	case string:
		return v
	}
	return "unexpected panic"
}

func argString(args []js.Value, i int) string {
	if i >= len(args) || args[i].Type() != js.TypeString {
		return ""
	}
	return args[i].String()
}

// request reads the request object, checking types and sizes before
// copying anything large into Go.
func request(args []js.Value) (*service.Request, error) {
	if len(args) == 0 || args[0].Type() != js.TypeObject {
		return nil, &service.FieldError{Field: "", Message: "the request must be an object"}
	}
	o := args[0]
	req := &service.Request{}
	str := func(name string, limit int) (string, error) {
		v := o.Get(name)
		switch v.Type() {
		case js.TypeUndefined, js.TypeNull:
			return "", nil
		case js.TypeString:
			if n := strLen(v); n > limit {
				msg := "the input is " + strconv.Itoa(n) + " characters long; the limit is " + strconv.Itoa(limit)
				if name == "xml" {
					msg = "the topology XML is " + strconv.Itoa(n) + " characters long; the limit is " + strconv.Itoa(limit>>20) + " MiB (a real dump is well under 100 KB)"
				}
				return "", &service.FieldError{Field: name, Message: msg}
			}
			return v.String(), nil
		case js.TypeNumber:
			return strconv.FormatFloat(v.Float(), 'f', -1, 64), nil
		}
		return "", &service.FieldError{Field: name, Message: "want text"}
	}
	var err error
	if req.Preset, err = str("preset", 256); err != nil {
		return nil, err
	}
	if req.XML, err = str("xml", service.MaxXMLBytes); err != nil {
		return nil, err
	}
	if req.XMLName, err = str("xmlName", 256); err != nil {
		return nil, err
	}
	if req.NCCLTests, err = str("ncclTests", service.MaxNCCLTestsBytes); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"p2p", &req.P2P}, {"coll", &req.Coll}, {"bytes", &req.Bytes}, {"dtype", &req.Dtype}, {"graph", &req.Graph}, {"fabric", &req.Fabric},
		{"mode", &req.Step.Mode}, {"params", &req.Step.Params}, {"bucketCapMb", &req.Step.BucketCapMB}, {"layers", &req.Step.Layers},
		{"tensorsPerLayer", &req.Step.TensorsPerLayer}, {"forwardMs", &req.Step.ForwardMs}, {"backwardMs", &req.Step.BackwardMs},
		{"optimizerMs", &req.Step.OptimizerMs}, {"reshard", &req.Step.Reshard}, {"reduceDtype", &req.Step.ReduceDtype},
		{"shardDtype", &req.Step.ShardDtype}, {"timing", &req.Step.Timing}, {"gpu", &req.Step.GPU}, {"batch", &req.Step.Batch},
		{"seqLen", &req.Step.SeqLen}, {"mfu", &req.Step.MFU}, {"optimizer", &req.Step.Optimizer}} {
		if *f.dst, err = str(f.name, 256); err != nil {
			return nil, err
		}
	}
	if v := o.Get("firstIteration"); v.Type() == js.TypeBoolean {
		req.Step.FirstIteration = v.Bool()
	}
	if req.Nodes, err = intField(o, "nodes", 1, service.MaxNodes); err != nil {
		return nil, err
	}
	if req.Channel, err = intField(o, "channel", -1, 1<<20); err != nil {
		return nil, err
	}
	if o.Get("channel").Type() == js.TypeUndefined {
		req.Channel = 0
	}
	if ms, err := intField(o, "timeoutMs", 0, 10*60*1000); err == nil && ms > 0 {
		req.Timeout = time.Duration(ms) * time.Millisecond
	}
	env := o.Get("env")
	switch env.Type() {
	case js.TypeUndefined, js.TypeNull:
	case js.TypeString:
		if strLen(env) > service.MaxEnvVars*service.MaxEnvLen {
			return nil, &service.FieldError{Field: "env", Message: "the environment text is too long"}
		}
		req.Env = strings.Split(env.String(), "\n")
	case js.TypeObject:
		if !js.Global().Get("Array").Call("isArray", env).Bool() {
			return nil, &service.FieldError{Field: "env", Message: "want a list of NAME=VALUE assignments"}
		}
		n := env.Length()
		if n > service.MaxEnvVars {
			return nil, &service.FieldError{Field: "env", Message: "too many variables (" + strconv.Itoa(n) + "; the limit is " + strconv.Itoa(service.MaxEnvVars) + ")"}
		}
		for i := 0; i < n; i++ {
			v := env.Index(i)
			if v.Type() != js.TypeString || strLen(v) > service.MaxEnvLen {
				return nil, &service.FieldError{Field: "env", Message: "each variable must be NAME=VALUE text of at most " + strconv.Itoa(service.MaxEnvLen) + " characters"}
			}
			req.Env = append(req.Env, v.String())
		}
	default:
		return nil, &service.FieldError{Field: "env", Message: "want a list of NAME=VALUE assignments"}
	}
	if cb := o.Get("onProgress"); cb.Type() == js.TypeFunction {
		req.Progress = func(steps int64) { cb.Invoke(float64(steps)) }
	}
	return req, nil
}

// strLen is the length of a JS string in UTF-16 code units, read without
// copying it (Value.Length and Value.Get only work on objects, so the
// string is boxed with Object(s)). A string's UTF-8 form is at least this
// long, so this checks a byte limit before the copy.
func strLen(v js.Value) int { return js.Global().Get("Object").Invoke(v).Get("length").Int() }

// intField reads an integer given as a number or as decimal text.
func intField(o js.Value, name string, lo, hi int) (int, error) {
	v := o.Get(name)
	bad := &service.FieldError{Field: name, Message: "want a whole number from " + strconv.Itoa(lo) + " to " + strconv.Itoa(hi)}
	switch v.Type() {
	case js.TypeUndefined, js.TypeNull:
		return 0, nil
	case js.TypeNumber:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
			return 0, bad
		}
		return int(f), nil
	case js.TypeString:
		s := strings.TrimSpace(v.String())
		if s == "" {
			return 0, nil
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < lo || n > hi {
			return 0, bad
		}
		return n, nil
	}
	return 0, bad
}
