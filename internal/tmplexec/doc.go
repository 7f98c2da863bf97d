// Package tmplexec runs text/template parse trees compiled to Go closures.
//
// The standard executors interpret a template's tree on every run: each
// field is looked up by name, each function is called through reflection
// with its arguments boxed, and the walk itself allocates. The host renders
// the same few templates thousands of times a minute, and that
// interpretation was most of what a message cost to lay out. A Program
// walks the tree once, when it is compiled: fields resolve once per type,
// the builtins and html/template's escapers run as plain Go, and the
// common shapes of function are called without reflection.
//
// A Program follows text/template's semantics for the constructs it knows
// and refuses the rest: Compile fails on a construct it does not cover, and
// Execute fails wherever text/template would fail, and wherever it meets a
// case it does not cover. Either way the caller runs the standard executor
// instead, which gives the standard result or error: a Program is a faster
// road to the same output, never a different one.
//
// html/template works by rewriting a template's tree before its first run,
// adding an escaper after every action. Compiling that rewritten tree (see
// Compile) runs the same escapers, written again here because html/template
// keeps its own unexported.
package tmplexec
