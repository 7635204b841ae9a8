package shellparse

import (
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// parsers are reused: a new parser costs more than a typical parse. A
// parser may be reused once Parse returns; the tree it returned is not
// touched again.
var parsers = [...]sync.Pool{
	POSIX: {New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangPOSIX)) }},
	Bash:  {New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }},
}

// shell parses src in dialect d and analyzes every command in it.
func (z *analyzer) shell(src string, d Dialect, depth int) {
	if depth > MaxDepth {
		z.problem(Unreadable, "commands nested more than %d deep", MaxDepth)
		return
	}
	if r := badChars(src); r != "" {
		z.problem(Unreadable, "%s", r)
		return
	}
	if r := commentContinued(src); r != "" {
		z.problem(Unreadable, "%s", r)
		return
	}
	z.a.Scripts = append(z.a.Scripts, src)
	parser := parsers[d].Get().(*syntax.Parser)
	f, err := parser.Parse(strings.NewReader(src), "")
	parsers[d].Put(parser)
	if err != nil {
		reason := "cannot parse the command as " + d.String() + " would: " + err.Error()
		if strings.Contains(err.Error(), "&>") {
			// dash reads "a &>f b" as "a &" then ">f b": b runs.
			reason += " (sh reads & then a redirection there; write >FILE 2>&1)"
		}
		z.problem(Unreadable, "%s", reason)
		return
	}
	w := &walker{z: z, src: src, d: d, depth: depth, stack: make([]syntax.Node, 0, 32)}
	syntax.Walk(f, w.visit)
}

// walker visits a syntax tree, keeping the path from the root so a
// command knows its pipelines and the command it is substituted into.
type walker struct {
	z      *analyzer
	src    string
	d      Dialect
	depth  int
	stack  []syntax.Node
	stages map[*syntax.Stmt]Stage
	calls  map[*syntax.CallExpr]int // command index of each call
}

func (w *walker) visit(n syntax.Node) bool {
	if n == nil {
		w.stack = w.stack[:len(w.stack)-1]
		return true
	}
	w.stack = append(w.stack, n)
	switch n := n.(type) {
	case *syntax.BinaryCmd:
		if isPipe(n) && !w.continuesPipeline() {
			w.z.pipelines++
			if w.stages == nil {
				w.stages = map[*syntax.Stmt]Stage{}
			}
			for i, st := range pipeStages(n) {
				w.stages[st] = Stage{Pipeline: w.z.pipelines, Index: i}
			}
		}
	case *syntax.CallExpr:
		if len(n.Args) > 0 {
			words := make([]Word, len(n.Args))
			for i, a := range n.Args {
				words[i] = w.word(a)
			}
			w.command(n, words)
		}
	case *syntax.DeclClause:
		// bash's declare, local, export, readonly, typeset, nameref.
		words := []Word{{Value: n.Variant.Value, Literal: true}}
		for _, as := range n.Args {
			words = append(words, w.assignWord(as))
		}
		w.command(nil, words)
	case *syntax.LetClause:
		words := []Word{{Value: "let", Literal: true}}
		for _, x := range n.Exprs {
			w.arithm(x)
		}
		w.command(nil, words)
	case *syntax.Assign:
		if n.Name != nil {
			w.z.setVar(n.Name.Value)
		}
		if n.Index != nil {
			w.arithm(n.Index)
		}
	case *syntax.WordIter:
		w.z.setVar(n.Name.Value)
	case *syntax.ArithmExp:
		w.arithm(n.X)
	case *syntax.ArithmCmd:
		w.arithm(n.X)
	case *syntax.CStyleLoop:
		w.arithm(n.Init)
		w.arithm(n.Cond)
		w.arithm(n.Post)
	case *syntax.ParamExp:
		w.paramExp(n)
	case *syntax.BinaryTest:
		if w.d == Bash && arithmTestOp(n.Op) {
			for _, x := range []syntax.TestExpr{n.X, n.Y} {
				if word, ok := x.(*syntax.Word); ok {
					w.arithm(word)
				}
			}
		}
	case *syntax.ExtGlob, *syntax.BraceExp:
		// Words holding them are marked Split by word().
	}
	return true
}

// command records a simple command and follows what it runs.
func (w *walker) command(call *syntax.CallExpr, words []Word) {
	c := Command{Words: words, Parent: w.parent()}
	var stmt *syntax.Stmt
	for i := len(w.stack) - 1; i >= 0; i-- {
		st, ok := w.stack[i].(*syntax.Stmt)
		if !ok {
			continue
		}
		if stmt == nil {
			stmt = st
		}
		if s, ok := w.stages[st]; ok {
			c.Stages = append(c.Stages, s)
		}
	}
	if stmt != nil {
		for _, r := range stmt.Redirs {
			c.Redirects = append(c.Redirects, Redirect{Op: r.Op.String(), Target: w.word(r.Word)})
		}
	}
	idx := len(w.z.a.Commands)
	w.z.a.Commands = append(w.z.a.Commands, c)
	if call != nil {
		if w.calls == nil {
			w.calls = map[*syntax.CallExpr]int{}
		}
		w.calls[call] = idx
	}
	w.z.run(idx, words, "", w.d, w.depth)
}

// parent finds the command whose word or redirection holds the node on
// top of the stack in a substitution: below the innermost substitution,
// the nearest statement's command.
func (w *walker) parent() int {
	i := len(w.stack) - 1
	for ; i >= 0; i-- {
		switch w.stack[i].(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			goto outer
		}
	}
	return -1
outer:
	for ; i >= 0; i-- {
		if st, ok := w.stack[i].(*syntax.Stmt); ok {
			if call, ok := st.Cmd.(*syntax.CallExpr); ok {
				if idx, ok := w.calls[call]; ok {
					return idx
				}
			}
			return -1
		}
	}
	return -1
}

func isPipe(b *syntax.BinaryCmd) bool {
	return b.Op == syntax.Pipe || b.Op == syntax.PipeAll
}

// continuesPipeline reports whether the pipe on top of the stack is part
// of a longer pipeline already numbered (a | b | c nests binary pipes).
func (w *walker) continuesPipeline() bool {
	n := len(w.stack)
	if n < 3 {
		return false
	}
	_, isStmt := w.stack[n-2].(*syntax.Stmt)
	b, isBin := w.stack[n-3].(*syntax.BinaryCmd)
	return isStmt && isBin && isPipe(b)
}

func pipeStages(b *syntax.BinaryCmd) []*syntax.Stmt {
	var out []*syntax.Stmt
	for _, st := range []*syntax.Stmt{b.X, b.Y} {
		if inner, ok := st.Cmd.(*syntax.BinaryCmd); ok && isPipe(inner) {
			out = append(out, pipeStages(inner)...)
		} else {
			out = append(out, st)
		}
	}
	return out
}

// arithm refuses bash arithmetic that reads a variable: bash evaluates
// the variable's value as an expression, and an array subscript in it
// (a[$(cmd)]) runs a command the text does not show. dash does not.
func (w *walker) arithm(x syntax.ArithmExpr) {
	if w.d != Bash || x == nil {
		return
	}
	bad := false
	syntax.Walk(x, func(n syntax.Node) bool {
		if word, ok := n.(*syntax.Word); ok {
			if lit := word.Lit(); lit == "" || !isNumber(lit) {
				bad = true
			}
			return false
		}
		return true
	})
	if bad {
		w.z.problem(Unsupported, "bash arithmetic on a variable evaluates its value as code (a[$(cmd)] runs cmd): use sh, or literal numbers")
	}
}

func isNumber(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c == 'x' || c == 'X' || c == '#' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return s != "" && s[0] >= '0' && s[0] <= '9'
}

func arithmTestOp(op syntax.BinTestOperator) bool {
	switch op {
	case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
		return true
	}
	return false
}

// paramExp refuses bash's expansions that evaluate code or arithmetic.
func (w *walker) paramExp(p *syntax.ParamExp) {
	if w.d != Bash {
		return
	}
	if p.Exp != nil && p.Exp.Op == syntax.OtherParamOps {
		w.z.problem(Unsupported, "bash ${x@…} transformations (${x@P} runs the command substitutions in x): not allowed")
	}
	if p.Slice != nil {
		w.arithm(p.Slice.Offset)
		w.arithm(p.Slice.Length)
	}
	if p.Index != nil {
		w.arithm(p.Index)
	}
}

// assignWord renders a declare/export argument as one word.
func (w *walker) assignWord(as *syntax.Assign) Word {
	var out Word
	switch {
	case as.Naked && as.Name != nil:
		out = Word{Value: as.Name.Value, Literal: true}
	case as.Naked:
		out = w.word(as.Value)
	default:
		out = Word{Value: w.src[as.Pos().Offset():as.End().Offset()], Literal: false}
		if as.Value != nil && as.Index == nil && as.Array == nil {
			v := w.word(as.Value)
			out = Word{Value: as.Name.Value + "=" + v.Value, Literal: v.Literal}
		}
	}
	return out
}
