// Package doctor reads NCCL and PyTorch distributed logs and environment
// dumps and explains what they show.
//
// ParseLog streams a log (NCCL_DEBUG=INFO output of NCCL 2.18 to 2.30, the
// releases whose connection and tuning lines it reads; package ncclmsg ties
// the lines of 2.7 to 2.30 to their source; mixed with PyTorch
// ProcessGroupNCCL messages, possibly from many ranks at once)
// into a Summary: version, ranks, hosts and GPUs, ring orders, trees,
// per-peer transports, channel counts, NVLS/CollNet state, the TUNING table,
// chosen algorithms, environment echoes, warnings, timeouts and watchdog
// aborts. Memory stays bounded whatever the input size: lines are cut at a
// maximum length and every list keeps a fixed number of entries plus a count.
// Bad input (binary data, truncated or interleaved lines) yields a partial
// summary with parser notes, never a panic.
//
// Diagnose turns a Summary and an environment into Diagnoses, each with the
// evidence lines, an explanation and links to the site's troubleshooting
// notes and variable reference. A WARN line that NCCL's message catalog ties
// to a call but no rule explains gets the generic reading of the part of
// NCCL that printed it (ID "generic-" and the family, ranked after every
// rule; catalogfamily.go). An NCCL message a caller quotes (PyTorch's
// "Last error:", a repr or JSON string with escaped newlines, nccl-tests'
// "Test NCCL failure") is read as the WARN line it quotes (quoted.go).
// LintEnv checks pasted `env` output or an
// nccl.conf file line by line against the variable tables of the pinned
// releases (NCCL v2.30.7-1, PyTorch v2.6.0).
//
// The package is plain Go without syscall/js so that the CLI (ncclsim
// doctor), the tests and the wasm playground share it.
package doctor
