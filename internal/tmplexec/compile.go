package tmplexec

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"text/template/parse"
)

// Program is a template compiled with every template it calls.
type Program struct {
	name string
	run  *step
}

// step runs a node of the tree: it writes what the node writes.
type step func(s *state, dot reflect.Value)

// expr evaluates a pipeline or an argument.
type expr func(s *state, dot reflect.Value) reflect.Value

// command evaluates one command of a pipeline, final being the value the
// command before it gave (missing for the first).
type command func(s *state, dot, final reflect.Value) reflect.Value

// Lookup finds the tree of a template by name, nil when there is none.
type Lookup func(name string) *parse.Tree

// Compile compiles the template name and every template it calls, each
// found with lookup. funcs are the functions the templates were parsed
// with, as given to text/template's or html/template's Funcs; the
// builtins and html/template's escapers need not be among them.
//
// For html/template, compile the tree only after html/template has run it
// once: the escapers are added to the tree then.
func Compile(name string, lookup Lookup, funcs map[string]any) (*Program, error) {
	c := &compiler{lookup: lookup, funcs: funcs, templates: map[string]*step{}}
	run, err := c.template(name)
	if err != nil {
		return nil, fmt.Errorf("tmplexec: compile %q: %w", name, err)
	}
	return &Program{name: name, run: run}, nil
}

// Name is the name of the template p runs.
func (p *Program) Name() string { return p.name }

// errUnsupported marks a construct the compiler leaves to text/template.
var errUnsupported = errors.New("not supported")

// failure carries an error up through the steps to Execute.
type failure struct{ err error }

// fail stops the run: text/template would fail here too, or the case is
// one this package leaves to it.
func fail(format string, args ...any) {
	panic(failure{fmt.Errorf(format, args...)})
}

// Execute runs p on data, writing to b. On an error b holds whatever was
// written before it; the caller that wants text/template's own output and
// error cuts b back and runs text/template.
func (p *Program) Execute(b *bytes.Buffer, data any) (err error) {
	s := states.Get().(*state)
	s.w = b
	defer func() {
		if r := recover(); r != nil {
			if f, ok := r.(failure); ok {
				err = fmt.Errorf("tmplexec: %s: %w", p.name, f.err)
			} else {
				// A function that panics, or a case this package got
				// wrong: the caller's standard run reports it properly.
				err = fmt.Errorf("tmplexec: %s: %v", p.name, r)
			}
		}
		s.w = nil
		clear(s.vars)
		s.vars = s.vars[:0]
		states.Put(s)
	}()
	value, ok := data.(reflect.Value)
	if !ok {
		value = reflect.ValueOf(data)
	}
	s.base, s.depth = 0, 0
	s.vars = append(s.vars[:0], variable{"$", value})
	(*p.run)(s, value)
	return nil
}

// state is one run's writer and variables.
type state struct {
	w    *bytes.Buffer
	vars []variable
	// base is where the running template's variables start: a template
	// called by another sees none of its caller's.
	base int
	// depth counts the templates called and not yet returned from.
	depth int
}

// maxDepth is text/template's bound on templates calling templates: a
// template that calls itself for ever fails there rather than exhaust
// the stack.
const maxDepth = 100000

var states = sync.Pool{New: func() any { return &state{vars: make([]variable, 0, 16)} }}

type variable struct {
	name  string
	value reflect.Value
}

func (s *state) push(name string, v reflect.Value) { s.vars = append(s.vars, variable{name, v}) }

func (s *state) varValue(name string) reflect.Value {
	for i := len(s.vars) - 1; i >= s.base; i-- {
		if s.vars[i].name == name {
			return s.vars[i].value
		}
	}
	fail("undefined variable: %s", name)
	panic("not reached")
}

func (s *state) setVar(name string, v reflect.Value) {
	for i := len(s.vars) - 1; i >= s.base; i-- {
		if s.vars[i].name == name {
			s.vars[i].value = v
			return
		}
	}
	fail("undefined variable: %s", name)
}

// compiler turns trees into steps.
type compiler struct {
	lookup    Lookup
	funcs     map[string]any
	templates map[string]*step
}

// template compiles the template name once, however many call it (or it
// calls itself).
func (c *compiler) template(name string) (*step, error) {
	if st, ok := c.templates[name]; ok {
		return st, nil
	}
	tree := c.lookup(name)
	if tree == nil || tree.Root == nil {
		return nil, fmt.Errorf("no template %q", name)
	}
	st := new(step)
	c.templates[name] = st
	run, err := c.list(tree.Root)
	if err != nil {
		return nil, fmt.Errorf("template %q: %w", name, err)
	}
	*st = run
	return st, nil
}

func (c *compiler) list(l *parse.ListNode) (step, error) {
	if l == nil {
		return func(*state, reflect.Value) {}, nil
	}
	steps := make([]step, 0, len(l.Nodes))
	for _, n := range l.Nodes {
		st, err := c.node(n)
		if err != nil {
			return nil, err
		}
		if st != nil {
			steps = append(steps, st)
		}
	}
	switch len(steps) {
	case 0:
		return func(*state, reflect.Value) {}, nil
	case 1:
		return steps[0], nil
	}
	return func(s *state, dot reflect.Value) {
		for _, st := range steps {
			st(s, dot)
		}
	}, nil
}

func (c *compiler) node(n parse.Node) (step, error) {
	switch n := n.(type) {
	case *parse.TextNode:
		text := n.Text
		return func(s *state, _ reflect.Value) { s.w.Write(text) }, nil
	case *parse.CommentNode:
		return nil, nil
	case *parse.ActionNode:
		return c.action(n)
	case *parse.IfNode:
		return c.ifOrWith(n.Pipe, n.List, n.ElseList, false)
	case *parse.WithNode:
		return c.ifOrWith(n.Pipe, n.List, n.ElseList, true)
	case *parse.RangeNode:
		return c.rangeNode(n)
	case *parse.TemplateNode:
		return c.templateCall(n)
	}
	return nil, fmt.Errorf("%s: %w", n, errUnsupported)
}

// action prints its pipeline's value, unless it declares variables.
func (c *compiler) action(n *parse.ActionNode) (step, error) {
	if len(n.Pipe.Decl) == 0 {
		if st, ok, err := c.escapedAction(n.Pipe); ok || err != nil {
			return st, err
		}
	}
	pipe, err := c.pipeline(n.Pipe)
	if err != nil {
		return nil, err
	}
	if len(n.Pipe.Decl) > 0 {
		return func(s *state, dot reflect.Value) { pipe(s, dot) }, nil
	}
	return func(s *state, dot reflect.Value) { printValue(s.w, pipe(s, dot)) }, nil
}

// escapedAction compiles an action that html/template ends with its HTML
// text escaper so that the value is escaped straight into the output.
func (c *compiler) escapedAction(p *parse.PipeNode) (step, bool, error) {
	n := len(p.Cmds)
	if n < 2 || !c.isEscaper(p.Cmds[n-1], htmlEscaperName) {
		return nil, false, nil
	}
	head := &parse.PipeNode{NodeType: parse.NodePipe, Pos: p.Pos, Line: p.Line, Cmds: p.Cmds[:n-1]}
	pipe, err := c.pipeline(head)
	if err != nil {
		return nil, true, err
	}
	return func(s *state, dot reflect.Value) { writeHTMLEscaped(s.w, pipe(s, dot)) }, true, nil
}

// isEscaper reports whether cmd is a call of html/template's escaper name
// on the value before it alone, not shadowed by a function of the same
// name.
func (c *compiler) isEscaper(cmd *parse.CommandNode, name string) bool {
	id, ok := cmd.Args[0].(*parse.IdentifierNode)
	if !ok || id.Ident != name || len(cmd.Args) != 1 {
		return false
	}
	_, shadowed := c.funcs[name]
	return !shadowed
}

// branches compiles the body of an if, with or range, and its else: nil
// when there is none.
func (c *compiler) branches(list, elseList *parse.ListNode) (body, orElse step, err error) {
	if body, err = c.list(list); err != nil || elseList == nil {
		return body, nil, err
	}
	orElse, err = c.list(elseList)
	return body, orElse, err
}

func (c *compiler) ifOrWith(p *parse.PipeNode, list, elseList *parse.ListNode, with bool) (step, error) {
	pipe, err := c.pipeline(p)
	if err != nil {
		return nil, err
	}
	body, orElse, err := c.branches(list, elseList)
	if err != nil {
		return nil, err
	}
	return func(s *state, dot reflect.Value) {
		mark := len(s.vars)
		val := pipe(s, dot)
		truth, ok := isTrue(indirectInterface(val))
		if !ok {
			fail("if/with can't use %v", val)
		}
		switch {
		case truth && with:
			body(s, val)
		case truth:
			body(s, dot)
		case orElse != nil:
			orElse(s, dot)
		}
		s.vars = s.vars[:mark]
	}, nil
}

func (c *compiler) rangeNode(n *parse.RangeNode) (step, error) {
	pipe, err := c.pipeline(n.Pipe)
	if err != nil {
		return nil, err
	}
	if n.Pipe.IsAssign {
		return nil, fmt.Errorf("range with assignment: %w", errUnsupported)
	}
	decls := len(n.Pipe.Decl)
	body, orElse, err := c.branches(n.List, n.ElseList)
	if err != nil {
		return nil, err
	}
	return func(s *state, dot reflect.Value) {
		outer := len(s.vars)
		val, _ := indirect(pipe(s, dot))
		mark := len(s.vars)
		switch val.Kind() {
		case reflect.Array, reflect.Slice:
			if val.Len() == 0 {
				break
			}
			for i := 0; i < val.Len(); i++ {
				elem := val.Index(i)
				if decls > 0 {
					// With two variables, the second is the element and
					// the first the index.
					s.vars[len(s.vars)-1].value = elem
				}
				if decls > 1 {
					s.vars[len(s.vars)-2].value = reflect.ValueOf(i)
				}
				body(s, elem)
				s.vars = s.vars[:mark]
			}
			s.vars = s.vars[:outer]
			return
		case reflect.Invalid:
			// Nothing to range over, as text/template has it.
		default:
			// Maps, channels, integers and functions: left to
			// text/template.
			fail("range over %s: %w", val.Kind(), errUnsupported)
		}
		if orElse != nil {
			orElse(s, dot)
		}
		s.vars = s.vars[:outer]
	}, nil
}

func (c *compiler) templateCall(n *parse.TemplateNode) (step, error) {
	target, err := c.template(n.Name)
	if err != nil {
		return nil, err
	}
	var pipe expr
	if n.Pipe != nil {
		if pipe, err = c.pipeline(n.Pipe); err != nil {
			return nil, err
		}
	}
	return func(s *state, dot reflect.Value) {
		var v reflect.Value
		if pipe != nil {
			v = pipe(s, dot)
		}
		if s.depth >= maxDepth {
			fail("exceeded maximum template depth (%v)", maxDepth)
		}
		base, mark := s.base, len(s.vars)
		s.push("$", v)
		s.base, s.depth = mark, s.depth+1
		(*target)(s, v)
		s.vars, s.base, s.depth = s.vars[:mark], base, s.depth-1
	}, nil
}

// pipeline compiles a pipeline: its commands in turn, each given the
// value of the one before, then its variables declared or assigned.
func (c *compiler) pipeline(p *parse.PipeNode) (expr, error) {
	if p == nil {
		return func(*state, reflect.Value) reflect.Value { return reflect.Value{} }, nil
	}
	cmds := make([]command, len(p.Cmds))
	for i, cmd := range p.Cmds {
		run, err := c.command(cmd, i > 0)
		if err != nil {
			return nil, err
		}
		cmds[i] = run
	}
	names := make([]string, len(p.Decl))
	for i, d := range p.Decl {
		if len(d.Ident) != 1 {
			return nil, fmt.Errorf("variable %s: %w", d, errUnsupported)
		}
		names[i] = d.Ident[0]
	}
	assign := p.IsAssign
	return func(s *state, dot reflect.Value) reflect.Value {
		value := missing
		for _, cmd := range cmds {
			value = cmd(s, dot, value)
			// A value of type any is dug out, as text/template does.
			if value.Kind() == reflect.Interface && value.Type().NumMethod() == 0 {
				value = reflect.ValueOf(value.Interface())
			}
		}
		for _, name := range names {
			if assign {
				s.setVar(name, value)
			} else {
				s.push(name, value)
			}
		}
		return value
	}, nil
}

// command compiles one command; hasFinal is whether a value comes into it
// from the command before.
func (c *compiler) command(cmd *parse.CommandNode, hasFinal bool) (command, error) {
	args := cmd.Args[1:]
	switch n := cmd.Args[0].(type) {
	case *parse.FieldNode:
		return c.fieldChain(n.Ident, args, hasFinal, func(_ *state, dot reflect.Value) reflect.Value { return dot })
	case *parse.ChainNode:
		if n.Node.Type() == parse.NodeNil {
			return nil, fmt.Errorf("chain on nil: %w", errUnsupported)
		}
		recv, err := c.dynamic(n.Node, nil)
		if err != nil {
			return nil, err
		}
		return c.fieldChain(n.Field, args, hasFinal, recv)
	case *parse.VariableNode:
		name := n.Ident[0]
		recv := func(s *state, _ reflect.Value) reflect.Value { return s.varValue(name) }
		if len(n.Ident) == 1 {
			if len(args) > 0 || hasFinal {
				return nil, fmt.Errorf("arguments to variable %s: %w", n, errUnsupported)
			}
			return func(s *state, dot, _ reflect.Value) reflect.Value { return recv(s, dot) }, nil
		}
		return c.fieldChain(n.Ident[1:], args, hasFinal, recv)
	case *parse.IdentifierNode:
		return c.call(n.Ident, args, hasFinal)
	}
	if len(args) > 0 || hasFinal {
		return nil, fmt.Errorf("arguments to %s: %w", cmd.Args[0], errUnsupported)
	}
	switch n := cmd.Args[0].(type) {
	case *parse.PipeNode:
		pipe, err := c.pipeline(n)
		if err != nil {
			return nil, err
		}
		return func(s *state, dot, _ reflect.Value) reflect.Value { return pipe(s, dot) }, nil
	case *parse.DotNode:
		return func(_ *state, dot, _ reflect.Value) reflect.Value { return dot }, nil
	case *parse.BoolNode, *parse.NumberNode, *parse.StringNode:
		v, err := constant(n)
		if err != nil {
			return nil, err
		}
		return func(*state, reflect.Value, reflect.Value) reflect.Value { return v }, nil
	}
	return nil, fmt.Errorf("command %s: %w", cmd, errUnsupported)
}

// constant is the value text/template gives a constant where any type
// will do.
func constant(n parse.Node) (reflect.Value, error) {
	switch n := n.(type) {
	case *parse.BoolNode:
		return reflect.ValueOf(n.True), nil
	case *parse.StringNode:
		return reflect.ValueOf(n.Text), nil
	case *parse.NumberNode:
		// text/template reads 1 as an int, 1.0 or 1e3 as a float64.
		if n.IsInt && !n.IsComplex && !strings.ContainsAny(n.Text, ".eEpP") && int64(int(n.Int64)) == n.Int64 {
			return reflect.ValueOf(int(n.Int64)), nil
		}
	}
	return reflect.Value{}, fmt.Errorf("constant %s: %w", n, errUnsupported)
}

// dynamic compiles an argument that is not a constant, checked against
// typ as text/template checks it (nil: any).
func (c *compiler) dynamic(n parse.Node, typ reflect.Type) (expr, error) {
	var e expr
	switch n := n.(type) {
	case *parse.DotNode:
		e = func(_ *state, dot reflect.Value) reflect.Value { return dot }
	case *parse.PipeNode:
		pipe, err := c.pipeline(n)
		if err != nil {
			return nil, err
		}
		e = pipe
	case *parse.FieldNode, *parse.VariableNode, *parse.ChainNode, *parse.IdentifierNode:
		// Evaluated as a command of its own, with no arguments.
		cmd, err := c.command(&parse.CommandNode{NodeType: parse.NodeCommand, Args: []parse.Node{n}}, false)
		if err != nil {
			return nil, err
		}
		e = func(s *state, dot reflect.Value) reflect.Value { return cmd(s, dot, missing) }
	default:
		return nil, fmt.Errorf("argument %s: %w", n, errUnsupported)
	}
	return func(s *state, dot reflect.Value) reflect.Value { return validateType(e(s, dot), typ) }, nil
}

// isDynamic reports whether text/template evaluates n rather than
// converting it to the parameter's type.
func isDynamic(n parse.Node) bool {
	switch n.(type) {
	case *parse.DotNode, *parse.FieldNode, *parse.VariableNode, *parse.PipeNode, *parse.IdentifierNode, *parse.ChainNode:
		return true
	}
	return false
}

// arg compiles an argument for a parameter of type typ.
func (c *compiler) arg(n parse.Node, typ reflect.Type) (expr, error) {
	if isDynamic(n) {
		return c.dynamic(n, typ)
	}
	var v reflect.Value
	switch n := n.(type) {
	case *parse.NilNode:
		if !canBeNil(typ) {
			return nil, fmt.Errorf("nil for %s: %w", typ, errUnsupported)
		}
		v = reflect.Zero(typ)
	case *parse.StringNode:
		if typ.Kind() != reflect.String {
			break
		}
		v = reflect.New(typ).Elem()
		v.SetString(n.Text)
	case *parse.BoolNode:
		if typ.Kind() != reflect.Bool {
			break
		}
		v = reflect.New(typ).Elem()
		v.SetBool(n.True)
	case *parse.NumberNode:
		switch typ.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			if !n.IsInt {
				break
			}
			v = reflect.New(typ).Elem()
			if v.OverflowInt(n.Int64) {
				return nil, fmt.Errorf("%s overflows %s: %w", n, typ, errUnsupported)
			}
			v.SetInt(n.Int64)
		}
	}
	if !v.IsValid() && typ.Kind() == reflect.Interface && typ.NumMethod() == 0 {
		// A constant for a parameter of type any keeps its own type.
		var err error
		if v, err = constant(n); err != nil {
			return nil, err
		}
	}
	if !v.IsValid() {
		return nil, fmt.Errorf("argument %s for %s: %w", n, typ, errUnsupported)
	}
	return func(*state, reflect.Value) reflect.Value { return v }, nil
}

// valueArg compiles an argument of a builtin, which text/template hands
// the reflect.Value itself: an invalid one (a nil) included.
func (c *compiler) valueArg(n parse.Node) (expr, error) {
	if _, ok := n.(*parse.NilNode); ok {
		return func(*state, reflect.Value) reflect.Value { return reflect.Value{} }, nil
	}
	if !isDynamic(n) {
		v, err := constant(n)
		if err != nil {
			return nil, err
		}
		return func(*state, reflect.Value) reflect.Value { return v }, nil
	}
	return c.dynamic(n, nil)
}
