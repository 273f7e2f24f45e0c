//go:build js && wasm && !nodoctor

package jsapi

import (
	"context"
	"syscall/js"

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
	g.Set("distnav", obj)
	return obj
}
