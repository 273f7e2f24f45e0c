//go:build js && wasm && !nodoctor

package jsapi

import (
	"context"
	"io/fs"
	"syscall/js"

	"github.com/distributed-nav/distributed-nav/playground/ncclmsg"
	"github.com/distributed-nav/distributed-nav/playground/service"
)

// RegisterDoctor installs the log doctor page's API as g.distnav and
// returns it.
func RegisterDoctor(g js.Value, s *service.Service) js.Value {
	obj := js.Global().Get("Object").New()
	obj.Set("version", service.NCCLVersion)
	obj.Set("presets", js.FuncOf(func(js.Value, []js.Value) any { return "[]" }))
	obj.Set("doctor", js.FuncOf(func(_ js.Value, args []js.Value) any {
		return guardReply(func() service.Reply {
			if len(args) == 0 || args[0].Type() != js.TypeObject {
				return service.Reply{JSON: service.ErrorJSON(&service.FieldError{Field: "log", Message: "the request must be an object"})}
			}
			o := args[0]
			logText, err := textField(o, "log", service.MaxLogBytes)
			if err != nil {
				return service.Reply{JSON: service.ErrorJSON(err)}
			}
			envText, err := textField(o, "env", service.MaxEnvDumpSize)
			if err != nil {
				return service.Reply{JSON: service.ErrorJSON(&service.FieldError{Field: "envdump", Message: err.(*service.FieldError).Message})}
			}
			return s.AnswerDoctor(context.Background(), logText, envText)
		})
	}))
	// NCCL's message catalog: a binary built with the tag nocatalog (the
	// doctor page's) lists in files the catalog files it lacks; the worker
	// fetches them from the site, beside the binary, and hands them to
	// setFiles before it reports the module ready. setFiles returns "" or
	// what is wrong with the files.
	if !ncclmsg.CompiledIn() {
		names := make([]any, len(ncclmsg.Files))
		for i, n := range ncclmsg.Files {
			names[i] = n
		}
		obj.Set("files", js.ValueOf(names))
	}
	obj.Set("setFiles", js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) == 0 || args[0].Type() != js.TypeObject {
			return "setFiles wants an object of file texts"
		}
		texts := map[string][]byte{}
		for _, n := range ncclmsg.Files {
			v := args[0].Get(n)
			if v.Type() != js.TypeString {
				return n + ": not given"
			}
			texts[n] = []byte(v.String())
		}
		ncclmsg.Provide(func(name string) ([]byte, error) {
			if b, ok := texts[name]; ok {
				return b, nil
			}
			return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
		})
		if _, err := ncclmsg.Default(); err != nil {
			return err.Error()
		}
		return ""
	}))
	g.Set("distnav", obj)
	return obj
}
