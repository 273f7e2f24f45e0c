package api

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/doctor"
	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
)

// Limits of the doctor's inputs in the browser.
const (
	MaxLogBytes    = 8 << 20
	MaxEnvDumpSize = 1 << 20
)

// Doctor reads a pasted log and/or environment dump as `ncclsim doctor
// --log FILE --env FILE --json` does: the JSON is {"result": <the CLI's
// object>, "command": ...}; the figure "report" is the doctor's HTML
// report (every log text escaped).
func (s *Session) Doctor(ctx context.Context, logText, envText string) Reply {
	if strings.TrimSpace(logText) == "" && strings.TrimSpace(envText) == "" {
		return errorReply(fieldErr("log", "paste an NCCL_DEBUG=INFO log, an environment listing, or both"))
	}
	if len(logText) > MaxLogBytes {
		return errorReply(fieldErr("log", "the log is "+strconv.Itoa(len(logText))+" bytes; the limit here is "+strconv.Itoa(MaxLogBytes>>20)+" MiB (ncclsim doctor reads any size)"))
	}
	if len(envText) > MaxEnvDumpSize {
		return errorReply(fieldErr("envdump", "the environment text is "+strconv.Itoa(len(envText))+" bytes; the limit is "+strconv.Itoa(MaxEnvDumpSize>>20)+" MiB"))
	}
	// The answer of `ncclsim doctor --json` (playground/cmd/ncclsim/doctor.go),
	// encoded with encoding/json from the same struct tags.
	out := doctor.Report{Diagnoses: []doctor.Diagnosis{}}
	env := ncclenv.Env{}
	if envText != "" {
		entries, _ := doctor.ParseEnvText(envText)
		kv := make(map[string]string, len(entries))
		for _, e := range entries {
			kv[e.Name] = e.Value
		}
		env = ncclenv.New(kv)
		out.EnvFindings = doctor.LintEnv(envText)
	}
	if logText != "" {
		sum, err := doctor.ParseLogContext(ctx, strings.NewReader(logText), doctor.Options{})
		if err != nil {
			return errorReply(&FieldError{Field: "log", Message: err.Error()})
		}
		out.Summary = sum
		out.Diagnoses = doctor.Diagnose(sum, env)
	} else {
		out.Diagnoses = doctor.Diagnose(nil, env)
	}
	var report bytes.Buffer
	if err := doctor.WriteHTML(&report, out.Summary, out.Diagnoses); err != nil {
		return errorReply(err)
	}
	var w jw
	w.obj()
	w.key("result")
	w.sep()
	body, err := json.Marshal(&out)
	if err != nil {
		return errorReply(err)
	}
	w.b = append(w.b, body...)
	cmd := "ncclsim doctor"
	if logText != "" {
		cmd += " --log nccl.log"
	}
	if envText != "" {
		cmd += " --env env.txt"
	}
	w.kstr("command", cmd+" --json")
	w.end()
	return Reply{JSON: w.String(), Figures: []Figure{{"report", report.String()}}}
}
