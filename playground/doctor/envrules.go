package doctor

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
)

// EnvEntry is one NAME=VALUE assignment, from pasted text (Line > 0) or
// from an environment handed to Diagnose (Line 0).
type EnvEntry struct {
	Line  int    `json:"line"`
	Name  string `json:"name"`
	Value string `json:"value"`
	Text  string `json:"text"`
}

// envIssue is one rule hit about one entry.
type envIssue struct {
	entry       EnvEntry
	id          string
	sev         Severity
	msg         string
	suggestions []string
	links       []Link
	also        []EnvEntry // the other entries of a contradiction
}

// envChecker applies the variable tables to a list of assignments.
type envChecker struct {
	reg *ncclenv.Registry
}

// defaultChecker is built once from the embedded tables and never changed.
var defaultChecker = sync.OnceValues(func() (*envChecker, error) {
	reg, err := ncclenv.DefaultRegistry()
	if err != nil {
		return nil, fmt.Errorf("doctor: %w", err)
	}
	return &envChecker{reg: reg}, nil
})

// debugOnly reports whether the tables mark name as a debugging knob.
func (c *envChecker) debugOnly(name string) bool {
	v, ok := c.reg.Lookup(name)
	return ok && v.DebugOnly
}

// isOff reports whether a value turns a switch off (or leaves it unset).
func isOff(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "0", "false", "no", "off", "n", "f":
		return true
	}
	return false
}

// isOne reports whether NCCL's strtol reading of v gives exactly 1, the only
// value NCCL_P2P_DISABLE reacts to
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/paths.cc#L244-L280).
func isOne(v string) bool {
	c := ncclenv.ParseCInt(strings.TrimSpace(v))
	return c.Digits && c.Value == 1
}

// quietKnobs are marked debug-only in the tables but worth keeping on in
// production (the flight recorder and its dumps, per the troubleshooting
// notes) or harmless (where NCCL's own log goes, topology dumps).
var quietKnobs = map[string]bool{
	"TORCH_NCCL_TRACE_BUFFER_SIZE": true, "TORCH_NCCL_DUMP_ON_TIMEOUT": true, "TORCH_NCCL_DEBUG_INFO_TEMP_FILE": true,
	"TORCH_NCCL_DEBUG_INFO_PIPE_FILE": true, "TORCH_NCCL_LOG_CPP_STACK_ON_UNCLEAN_SHUTDOWN": true,
	"TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC": true, "TORCH_NCCL_COORD_CHECK_MILSEC": true, "TORCH_NCCL_TRACE_CPP_STACK": true,
	"TORCH_FR_BUFFER_SIZE": true, "TORCH_FR_CPP_STACK": true, "TORCH_SHOW_CPP_STACKTRACES": true,
	"NCCL_DEBUG_SUBSYS": true, "NCCL_DEBUG_FILE": true, "NCCL_DEBUG_TIMESTAMP_FORMAT": true, "NCCL_DEBUG_TIMESTAMP_LEVELS": true,
	"NCCL_TOPO_DUMP_FILE": true, "NCCL_TOPO_DUMP_FILE_RANK": true, "NCCL_GRAPH_DUMP_FILE": true, "NCCL_GRAPH_DUMP_FILE_RANK": true,
	"TORCH_INCLUDE_STACK_TRACE": true, "TORCH_INCLUDE_ONLY_ACTIVE": true,
}

// containerVars are set by NVIDIA's container images to describe what they
// ship; no library reads them.
func containerVar(name string) bool {
	return name == "NCCL_VERSION" || strings.HasPrefix(name, "NV_LIBNCCL_")
}

// debugKnobMessage says why a debugging knob that is on costs something;
// ok is false when the value leaves it off.
func debugKnobMessage(name, value string) (string, Severity, bool) {
	v := strings.ToUpper(strings.TrimSpace(value))
	switch name {
	case "NCCL_DEBUG":
		if v == "" || v == "WARN" || v == "VERSION" {
			return "", Info, false
		}
		return fmt.Sprintf("NCCL logs at %s: start-up is slower and the output floods; keep WARN for production runs", v), Info, true
	case "NCCL_ALGO", "NCCL_PROTO":
		if v == "" {
			return "", Info, false
		}
		return "forces NCCL's choice, so the tuning model can no longer pick per message size; useful for benchmarks, usually slower as a default", Info, true
	case "CUDA_LAUNCH_BLOCKING":
		if isOff(value) {
			return "", Info, false
		}
		return "makes every CUDA launch synchronous; a debugging switch that slows training a lot", Warning, true
	case "TORCH_DISTRIBUTED_DEBUG":
		if v == "" || v == "OFF" {
			return "", Info, false
		}
		return fmt.Sprintf("%s adds consistency checks around collectives (DETAIL checks every one through an extra Gloo group); use it to reproduce a problem, not in production", v), Info, true
	case "TORCH_CPP_LOG_LEVEL":
		if v == "" || v == "WARNING" || v == "ERROR" || v == "FATAL" || v == "1" || v == "2" || v == "3" {
			return "", Info, false
		}
		return "verbose C++ logging from PyTorch; leave at the default WARNING in production", Info, true
	case "NCCL_IGNORE_DISABLED_P2P":
		if isOff(value) {
			return "", Info, false
		}
		return "silences NCCL's report that NVML refuses P2P between GPUs that look connected; keep it unset so the log says why P2P is off", Info, true
	}
	if isOff(value) {
		return "", Info, false
	}
	return "the variable tables mark it as a debugging setting; leave it unset in production runs", Info, true
}

// check runs every rule over entries. For names given more than once the
// last value counts for the cross-variable rules.
func (c *envChecker) check(entries []EnvEntry) []envIssue {
	last := map[string]EnvEntry{}
	for _, e := range entries {
		last[e.Name] = e
	}
	kv := make(map[string]string, len(last))
	for n, e := range last {
		kv[n] = e.Value
	}
	problems := map[string][]ncclenv.Problem{}
	for _, p := range c.reg.Validate(ncclenv.New(kv)) {
		problems[p.Name] = append(problems[p.Name], p)
	}
	var out []envIssue
	for _, e := range entries {
		if e != last[e.Name] {
			continue // reported once, for the value that counts
		}
		out = append(out, c.checkOne(e, problems[e.Name])...)
	}
	out = append(out, c.contradictions(last)...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.entry.Line != b.entry.Line {
			return a.entry.Line < b.entry.Line
		}
		if a.entry.Name != b.entry.Name {
			return a.entry.Name < b.entry.Name
		}
		return a.id < b.id
	})
	return out
}

func (c *envChecker) checkOne(e EnvEntry, probs []ncclenv.Problem) []envIssue {
	var out []envIssue
	base := []Link{envLink(e.Name), linkIgnoredEnv}
	known := false
	if _, ok := c.reg.Lookup(e.Name); ok {
		known = true
	}
	switch {
	case containerVar(e.Name):
		return []envIssue{{entry: e, id: "env-container", sev: Info,
			msg:   "set by NVIDIA's container images to record the NCCL package they ship; neither NCCL nor PyTorch reads it, so compare it with the version the log prints",
			links: []Link{linkVersions}}}
	case !known && !strings.HasPrefix(e.Name, "NCCL_") && !strings.HasPrefix(e.Name, "TORCH_"):
		return nil // some other program's variable
	}
	for _, p := range probs {
		switch p.Kind {
		case ncclenv.UnknownName:
			msg := "no release of NCCL (v2.30.7-1) or PyTorch (v2.6.0) we track reads this name, so it has no effect"
			out = append(out, envIssue{entry: e, id: "env-unknown", sev: Error, msg: msg, suggestions: p.Suggestions,
				links: []Link{linkIgnoredEnv}})
		case ncclenv.Deprecated:
			out = append(out, envIssue{entry: e, id: "env-deprecated", sev: Warning, msg: p.Message,
				links: links(envLink(e.Name), envLink(p.ReplacedBy), linkIgnoredEnv)})
		case ncclenv.NotNCCL:
			if p.ReplacedBy != "" {
				out = append(out, envIssue{entry: e, id: "env-deprecated", sev: Warning,
					msg:   fmt.Sprintf("PyTorch's old spelling of %s; PyTorch still reads it but logs a deprecation warning, and the new name wins when both are set", p.ReplacedBy),
					links: links(envLink(e.Name), envLink(p.ReplacedBy), linkIgnoredEnv)})
			}
		case ncclenv.BadValue, ncclenv.Clamped:
			sev := Warning
			if p.Severity == ncclenv.Error {
				sev = Error
			}
			out = append(out, envIssue{entry: e, id: "env-bad-value", sev: sev, msg: p.Message, links: base})
		case ncclenv.NoEffect:
			out = append(out, envIssue{entry: e, id: "env-no-effect", sev: Warning, msg: p.Message, links: base})
		}
	}
	if !known {
		return out
	}
	switch {
	case e.Name == "TORCH_NCCL_ENABLE_MONITORING" && isOff(e.Value) && strings.TrimSpace(e.Value) != "":
		out = append(out, envIssue{entry: e, id: "env-debug-knob", sev: Warning,
			msg:   "turns the heartbeat monitor off: a job whose watchdog hangs then sits forever instead of being terminated; use it only to keep a hung process alive for a debugger",
			links: []Link{envLink(e.Name), linkHeartbeat}})
	case (e.Name == "TORCH_NCCL_ASYNC_ERROR_HANDLING" || e.Name == "NCCL_ASYNC_ERROR_HANDLING") && strings.TrimSpace(e.Value) == "0":
		out = append(out, envIssue{entry: e, id: "env-debug-knob", sev: Warning,
			msg:   "mode 0 (NoHandling): after a timed-out or failed collective the job keeps hanging instead of ending",
			links: []Link{envLink("TORCH_NCCL_ASYNC_ERROR_HANDLING"), linkTimeout}})
	case c.debugOnly(e.Name) && !quietKnobs[e.Name]:
		if msg, sev, on := debugKnobMessage(e.Name, e.Value); on {
			out = append(out, envIssue{entry: e, id: "env-debug-knob", sev: sev, msg: msg, links: links(envLink(e.Name), linkEnvKnobs)})
		}
	}
	if v, ok := c.reg.Lookup(e.Name); ok && strings.HasPrefix(v.Type, "int") && v.Reader == ncclenv.ReaderNCCL {
		def, okDef := leadingSigned(v.Default)
		val := ncclenv.ParseCInt(strings.TrimSpace(e.Value))
		if okDef && val.Digits && val.Rest == "" && !val.Overflow && val.Value == int64(def) {
			out = append(out, envIssue{entry: e, id: "env-default", sev: Info,
				msg:   fmt.Sprintf("%d is already the default, so this line changes nothing", def),
				links: base})
		}
	}
	return out
}

// leadingSigned reads the integer a default-value cell starts with ("0",
// "-2 (auto/unset)"); false for cells that start otherwise ("unset ...").
func leadingSigned(s string) (int, bool) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0, false
	}
	n, err := strconv.Atoi(f[0])
	return n, err == nil
}

// contradictions finds settings that cancel or override each other.
func (c *envChecker) contradictions(last map[string]EnvEntry) []envIssue {
	var out []envIssue
	get := func(n string) (EnvEntry, bool) { e, ok := last[n]; return e, ok }
	add := func(e EnvEntry, sev Severity, msg string, ls []Link, also ...EnvEntry) {
		out = append(out, envIssue{entry: e, id: "env-contradiction", sev: sev, msg: msg, links: ls, also: also})
	}
	dis, hasDis := get("NCCL_P2P_DISABLE")
	if hasDis && isOne(dis.Value) {
		if lvl, ok := get("NCCL_P2P_LEVEL"); ok {
			add(lvl, Warning, "ignored: NCCL reads NCCL_P2P_DISABLE first, and with it set to 1 P2P is off whatever NCCL_P2P_LEVEL says",
				links(envLink("NCCL_P2P_LEVEL"), envLink("NCCL_P2P_DISABLE"), linkP2P), dis)
		}
		if ign, ok := get("NCCL_IGNORE_DISABLED_P2P"); ok && !isOff(ign.Value) {
			add(ign, Info, "has nothing to do: with NCCL_P2P_DISABLE=1 NCCL never asks the driver whether P2P works, so there is no message to silence",
				links(envLink("NCCL_IGNORE_DISABLED_P2P"), envLink("NCCL_P2P_DISABLE"), linkPCIe4090), dis)
		}
		if shm, ok := get("NCCL_SHM_DISABLE"); ok && isOne(shm.Value) {
			add(shm, Warning, "with both P2P and SHM turned off, GPUs of the same host can reach each other only through the network transport",
				links(envLink("NCCL_SHM_DISABLE"), envLink("NCCL_P2P_DISABLE"), linkSHM), dis)
		}
	}
	minN, maxN := -1, -1
	var minE, maxE EnvEntry
	for _, n := range []string{"NCCL_MIN_NRINGS", "NCCL_MIN_NCHANNELS"} {
		if e, ok := get(n); ok {
			if v := ncclenv.ParseCInt(e.Value); v.Digits {
				minN, minE = int(v.Value), e
			}
		}
	}
	for _, n := range []string{"NCCL_MAX_NRINGS", "NCCL_MAX_NCHANNELS"} {
		if e, ok := get(n); ok {
			if v := ncclenv.ParseCInt(e.Value); v.Digits {
				maxN, maxE = int(v.Value), e
			}
		}
	}
	if minN > 0 && maxN > 0 && minN > maxN {
		add(minE, Warning, fmt.Sprintf("asks for at least %d channels while %s caps them at %d", minN, maxE.Name, maxN),
			links(envLink("NCCL_MIN_NCHANNELS"), envLink("NCCL_MAX_NCHANNELS"), linkChannels), maxE)
	}
	// A deprecated alias and its replacement with different values.
	for name, e := range last {
		v, ok := c.reg.Lookup(name)
		if !ok || v.DeprecatedAliasOf == "" {
			continue
		}
		if repl, ok := get(v.DeprecatedAliasOf); ok && strings.TrimSpace(repl.Value) != strings.TrimSpace(e.Value) {
			add(e, Warning, fmt.Sprintf("disagrees with %s=%s, which wins; this old name is ignored", repl.Name, repl.Value),
				links(envLink(name), envLink(repl.Name), linkIgnoredEnv), repl)
		}
	}
	bw, hasBW := get("TORCH_NCCL_BLOCKING_WAIT")
	if !hasBW {
		bw, hasBW = get("NCCL_BLOCKING_WAIT")
	}
	if hasBW && !isOff(bw.Value) {
		for _, n := range []string{"TORCH_NCCL_ASYNC_ERROR_HANDLING", "NCCL_ASYNC_ERROR_HANDLING"} {
			if ae, ok := get(n); ok {
				add(ae, Warning, "has no effect: with blocking wait on, ProcessGroupNCCL starts no watchdog thread, so timeouts surface as exceptions from wait() instead",
					links(envLink(n), envLink("TORCH_NCCL_BLOCKING_WAIT"), linkTimeout), bw)
				break
			}
		}
	}
	if mon, ok := get("TORCH_NCCL_ENABLE_MONITORING"); ok && isOff(mon.Value) && strings.TrimSpace(mon.Value) != "" {
		if hb, ok := get("TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC"); ok {
			add(hb, Info, "is unused while TORCH_NCCL_ENABLE_MONITORING is off",
				links(envLink("TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC"), envLink("TORCH_NCCL_ENABLE_MONITORING"), linkHeartbeat), mon)
		}
	}
	if ibd, ok := get("NCCL_IB_DISABLE"); ok && isOne(ibd.Value) {
		if hca, ok := get("NCCL_IB_HCA"); ok {
			add(hca, Info, "has no effect: NCCL_IB_DISABLE=1 turns the built-in InfiniBand transport off (an external net plugin may ignore both)",
				links(envLink("NCCL_IB_HCA"), envLink("NCCL_IB_DISABLE"), linkNIC), ibd)
		}
	}
	return out
}
