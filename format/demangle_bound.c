/*
 * demangle_bound.c - how long can the demangled form of a mangled C++ name
 * be?  An upper bound, computed before the C++ runtime's __cxa_demangle is
 * trusted with a name from a file (demangle.c; docs/FORMAT.md, "Mangled names").
 *
 * Why: the Itanium mangling refers back to earlier parts of a name
 * (substitutions S_, S0_, ... and template parameters T_, T0_, ...) and the
 * demangler prints each reference in full, so the output can grow
 * exponentially with the input: a 253-byte name built as A<B,B> nested 25
 * deep prints 436 MB and takes seconds; 1 KB would never finish.  A hostile
 * profile must not hang or exhaust the reader.
 *
 * How: a recursive-descent pass over the grammar (the subset compilers emit
 * for kernels: nested and local names, templates and packs, lambdas,
 * operators, the type grammar, literals) that adds up what each part can
 * print, with generous constants per construct.  What a back-reference can
 * print is bounded without knowing which part it names:
 *   - a substitution prints one earlier candidate, so at most the largest
 *     candidate registered so far (every type, template name, template-id
 *     and nested-name prefix is registered when it completes, as the
 *     demangler adds them);
 *   - a template parameter prints an argument of the innermost function
 *     template whose signature is being printed (the demangler resolves it
 *     at print time), so at most that function's largest argument;
 *   - a pack expansion prints its pattern once per element of the pack.
 * A template parameter is printed against whichever function's signature
 * encloses the *printing*, which differs from where it was written when a
 * substitution reprints it elsewhere; that is how a reference could print
 * text that holds itself.  So each part carries the set of contexts whose
 * parameters it holds unresolved ("taint"); a substitution in one context
 * to a part tainted by another, or a parameter of a function whose own
 * arguments hold parameters, is refused.
 *
 * Anything not understood (expressions, decltype, conversion operators,
 * vendor qualifiers, special names) is refused: the name is kept as it is.
 * Refusing costs a readable name; accepting wrongly would cost the reader,
 * so the bound is the demangler's worst case, not its usual output (about
 * 3x the printed length on real kernel names).  tests/fuzz/demangle_fuzz.c
 * checks that every name accepted demangles to no more than its bound.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "format_internal.h"

#define BIG         ((uint64_t)1 << 60)     /* saturated: more than any limit */
#define DEPTH_MAX   192                     /* nesting, far above real names  */
#define CTX_MAX     62                      /* function encodings in a name   */
#define BUILTIN     24          /* "unsigned long long", "decltype(nullptr)" */
#define ABBREV      96          /* Ss before a constructor: the long form    */
#define SEP         4           /* ", ", "::", " >" between parts            */

typedef struct part {
    uint64_t n;                 /* printed bytes, at most                      */
    uint64_t taint;             /* contexts whose T_ it holds unresolved      */
} part;

/* What a template argument list holds, for the parameters that name it. */
typedef struct args_info {
    uint64_t max_arg;           /* the largest argument                        */
    uint64_t max_pack;          /* the most elements of a pack in it           */
    uint64_t taint;
    bool seen;
} args_info;

typedef struct fctx {           /* one function encoding                      */
    args_info a;                /* its own template arguments (a template)    */
    bool templ;
} fctx;

typedef struct st {
    const char *p, *end;
    int depth;
    bool bad;
    uint64_t cand;              /* the largest candidate for a substitution   */
    uint64_t taint;             /* the union of the candidates' taints        */
    uint64_t src;               /* the longest source name (ctor/dtor repeat) */
    int eff;                    /* the context T_ resolves in; -1: none       */
    fctx c[CTX_MAX];
    int nc;
} st;

static uint64_t add(uint64_t a, uint64_t b) { return a + b >= BIG || a + b < a ? BIG : a + b; }

static uint64_t mul(uint64_t a, uint64_t b)
{
    if (a && b > BIG / a)
        return BIG;
    return a * b;
}

static part bad(st *s)
{
    s->bad = true;
    return (part){ BIG, 0 };
}

static char peek(const st *s) { return s->p < s->end ? *s->p : '\0'; }
static char peek2(const st *s) { return s->end - s->p >= 2 ? s->p[1] : '\0'; }

static bool eat(st *s, char c)
{
    if (peek(s) != c)
        return false;
    s->p++;
    return true;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
static bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }

static uint64_t ctx_bit(int i) { return i >= 0 ? (uint64_t)1 << i : 0; }

/* A candidate for later substitutions. */
static void cand(st *s, part x)
{
    if (x.n > s->cand)
        s->cand = x.n;
    s->taint |= x.taint;
}

/* Decimal digits, the count of them in *ndig; false without one. */
static bool number(st *s, uint64_t *v, uint64_t *ndig)
{
    uint64_t x = 0, k = 0;
    while (is_digit(peek(s))) {
        x = x > BIG / 10 ? BIG : x * 10 + (uint64_t)(*s->p - '0');
        s->p++;
        k++;
    }
    if (v)
        *v = x;
    if (ndig)
        *ndig = k;
    return k > 0;
}

/* [digits] "_" as after Ut, Ul...E, T, a discriminator's second form. */
static bool num_us(st *s, uint64_t *ndig)
{
    number(s, NULL, ndig);
    return eat(s, '_');
}

static part type(st *s);
static part name(st *s, bool *templ, args_info *ai);
static part encoding(st *s);

static bool enter(st *s)
{
    if (++s->depth > DEPTH_MAX || s->bad) {
        s->bad = true;
        return false;
    }
    return true;
}

static part leave(st *s, part x)
{
    s->depth--;
    return s->bad ? (part){ BIG, 0 } : x;
}

static part source_name(st *s)
{
    uint64_t len;
    if (!number(s, &len, NULL) || len == 0 || len > (uint64_t)(s->end - s->p))
        return bad(s);
    s->p += len;
    if (len > s->src)
        s->src = len;
    return (part){ len + 24, 0 };       /* _GLOBAL__N_: "(anonymous namespace)" */
}

/* "_Z" <encoding> "E": a literal naming a function is an expression. */
static part literal(st *s)
{
    if (!eat(s, 'L') || peek(s) == '_')
        return bad(s);
    part t = type(s);
    uint64_t v = 0;
    while (s->p < s->end && *s->p != 'E') {
        s->p++;
        v++;
    }
    if (!eat(s, 'E'))
        return bad(s);
    return (part){ add(add(t.n, v), 16), t.taint };
}

/* "I" <arg>+ "E"; the arguments' largest, their packs' longest. */
static part targs(st *s, args_info *ai)
{
    if (!enter(s) || !eat(s, 'I'))
        return leave(s, bad(s));
    part r = { 8, 0 };
    args_info a = { .seen = true };
    uint64_t count = 0;
    while (!s->bad && peek(s) != 'E') {
        part x;
        if (peek(s) == 'L') {
            x = literal(s);
        } else if (peek(s) == 'J') {          /* a pack: "J" <arg>* "E" */
            s->p++;
            x = (part){ 8, 0 };
            uint64_t k = 0;
            while (!s->bad && peek(s) != 'E') {
                part e = peek(s) == 'L' ? literal(s) : peek(s) == 'J' || peek(s) == 'X'
                         ? bad(s) : type(s);
                x.n = add(x.n, add(e.n, SEP));
                x.taint |= e.taint;
                k++;
            }
            if (!eat(s, 'E'))
                return leave(s, bad(s));
            if (k > a.max_pack)
                a.max_pack = k;
        } else if (peek(s) == 'X' || peek(s) == '\0') {
            x = bad(s);                 /* expressions are not bounded here */
        } else {
            x = type(s);
        }
        if (x.n > a.max_arg)
            a.max_arg = x.n;
        a.taint |= x.taint;
        r.n = add(r.n, add(x.n, SEP));
        r.taint |= x.taint;
        count++;
    }
    if (!eat(s, 'E') || !count)
        return leave(s, bad(s));
    if (ai)
        *ai = a;
    return leave(s, r);
}

/* S_, S<seq>_, or a standard abbreviation (St is the caller's). */
static part substitution(st *s)
{
    if (!eat(s, 'S'))
        return bad(s);
    char c = peek(s);
    if (c == 'a' || c == 'b' || c == 's' || c == 'i' || c == 'o' || c == 'd') {
        s->p++;
        if (ABBREV > s->src)
            s->src = ABBREV;            /* a constructor repeats its name */
        return (part){ ABBREV, 0 };
    }
    while (is_digit(peek(s)) || is_upper(peek(s)))
        s->p++;
    if (!eat(s, '_'))
        return bad(s);
    /* it prints a candidate; one whose T_ belong to another context would
     * resolve them against this one */
    if (s->taint & ~ctx_bit(s->eff))
        return bad(s);
    return (part){ add(s->cand, 8), s->taint };
}

/* T_, T<n>_: an argument of the function whose signature is printed. */
static part template_param(st *s)
{
    if (!eat(s, 'T') || !num_us(s, NULL))
        return bad(s);
    if (s->eff < 0 || s->c[s->eff].a.taint)
        return bad(s);
    const args_info *a = &s->c[s->eff].a;
    return (part){ add(a->max_arg, 8), ctx_bit(s->eff) };
}

static part with_tags(st *s, part x)
{
    while (!s->bad && eat(s, 'B')) {        /* [abi:cxx11] */
        part t = source_name(s);
        x.n = add(x.n, add(t.n, 8));
    }
    return x;
}

static part operator_name(st *s)
{
    char a = peek(s), b = peek2(s);
    if (!is_lower(a))
        return bad(s);
    if (a == 'c' && b == 'v')
        return bad(s);                  /* prints its template's arguments again */
    if (a == 'l' && b == 'i') {         /* operator"" name */
        s->p += 2;
        part n = source_name(s);
        return (part){ add(n.n, 16), 0 };
    }
    if (a == 'v' && is_digit(b)) {      /* vendor operator */
        s->p += 2;
        part n = source_name(s);
        return (part){ add(n.n, 16), 0 };
    }
    if (!is_lower(b))
        return bad(s);
    s->p += 2;
    return (part){ 32, 0 };
}

/* Lambda parameters: "Ul" <type>+ "E" [n] "_" (the "l" already read). */
static part lambda(st *s)
{
    part r = { 32, 0 };
    while (!s->bad && peek(s) != 'E') {
        part t = type(s);
        r.n = add(r.n, add(t.n, SEP));
        r.taint |= t.taint;
    }
    uint64_t d = 0;
    if (!eat(s, 'E') || !num_us(s, &d))
        return bad(s);
    r.n = add(r.n, d);
    return r;
}

/* An unqualified name, its ABI tags included. */
static part unqualified(st *s)
{
    char c = peek(s), d = peek2(s);
    part x;
    uint64_t k = 0;
    if (is_digit(c)) {
        x = source_name(s);
    } else if (c == 'L' && is_digit(d)) {   /* internal linkage */
        s->p++;
        x = source_name(s);
    } else if (c == 'C' && d >= '1' && d <= '5') {
        s->p += 2;
        x = (part){ add(s->src > ABBREV ? s->src : ABBREV, 4), 0 };
    } else if (c == 'D' && d >= '0' && d <= '5') {
        s->p += 2;
        x = (part){ add(s->src > ABBREV ? s->src : ABBREV, 4), 0 };
    } else if (c == 'U' && d == 't') {      /* {unnamed type#N} */
        s->p += 2;
        if (!num_us(s, &k))
            return bad(s);
        x = (part){ 24 + k, 0 };
    } else if (c == 'U' && d == 'l') {      /* {lambda(...)#N} */
        s->p += 2;
        x = lambda(s);
    } else if (is_lower(c)) {
        x = operator_name(s);
    } else {
        return bad(s);
    }
    return with_tags(s, x);
}

/* St <unqualified>, or a substitution; either may take arguments.
 * *plain: a substitution without arguments (no new candidate). */
static part std_or_sub(st *s, bool *templ, args_info *ai, bool as_type, bool *plain)
{
    part x;
    bool is_std = peek2(s) == 't';
    if (is_std) {
        s->p += 2;
        part u = unqualified(s);
        x = (part){ add(u.n, 8), u.taint };
        if (as_type || peek(s) == 'I')
            cand(s, x);                 /* a template name, or a type */
    } else {
        x = substitution(s);
    }
    *plain = !is_std && peek(s) != 'I';
    if (peek(s) == 'I') {
        part a = targs(s, ai);
        x.n = add(x.n, a.n);
        x.taint |= a.taint;
        *templ = true;
    }
    return x;
}

/* "N" [r][V][K] [R|O] <prefix components> "E"; each prefix but the whole
 * name is a candidate (the demangler adds one unless "E" follows). */
static part nested(st *s, bool *templ, args_info *ai)
{
    if (!enter(s) || !eat(s, 'N'))
        return leave(s, bad(s));
    part r = { 16, 0 };
    while (peek(s) == 'r' || peek(s) == 'V' || peek(s) == 'K') {
        s->p++;                         /* " restrict", each time it is written */
        r.n += 16;
    }
    if (peek(s) == 'R' || peek(s) == 'O') {
        s->p++;                         /* " &&" */
        r.n += 16;
    }
    *templ = false;
    uint64_t k = 0;
    while (!s->bad && peek(s) != 'E') {
        char c = peek(s), d = peek2(s);
        part x;
        bool is_args = false;
        if (c == 'I') {
            if (!k)
                return leave(s, bad(s));
            x = targs(s, ai);
            is_args = true;
        } else if (c == 'S' && d == 't') {
            s->p += 2;                  /* "std", the next component its member */
            x = (part){ 8, 0 };
        } else if (c == 'S') {
            x = substitution(s);        /* its arguments: the next component */
        } else if (c == 'T') {
            x = template_param(s);
        } else if (c == 'M') {          /* a data member's initializer scope */
            s->p++;
            continue;
        } else if (c == 'D' && (d == 't' || d == 'T' || d == 'C')) {
            return leave(s, bad(s));
        } else {
            x = unqualified(s);
        }
        r.n = add(r.n, add(x.n, SEP));
        r.taint |= x.taint;
        *templ = is_args;
        k++;
        if (peek(s) != 'E' && c != 'S')
            cand(s, r);
    }
    if (!eat(s, 'E') || !k)
        return leave(s, bad(s));
    return leave(s, r);
}

/* [discriminator]: "_" <digit> or "__" <number> "_"; printed as nothing. */
static void discriminator(st *s)
{
    if (peek(s) != '_' || s->bad)
        return;
    if (is_digit(peek2(s))) {
        s->p += 2;
        return;
    }
    if (peek2(s) == '_') {
        s->p += 2;
        if (!number(s, NULL, NULL) || !eat(s, '_'))
            s->bad = true;
        return;
    }
    s->bad = true;
}

/* "Z" <encoding> "E" (<entity> [discriminator] | "s" [discriminator]). */
static part local(st *s, bool *templ, args_info *ai)
{
    if (!enter(s) || !eat(s, 'Z'))
        return leave(s, bad(s));
    part f = encoding(s);
    if (!eat(s, 'E'))
        return leave(s, bad(s));
    part r;
    *templ = false;
    if (eat(s, 's')) {
        r = (part){ add(f.n, 32), f.taint };    /* "::string literal" */
    } else if (peek(s) == 'd') {
        return leave(s, bad(s));                /* a default argument's scope */
    } else {
        part e = name(s, templ, ai);
        r = (part){ add(add(f.n, e.n), 32), f.taint | e.taint };
    }
    discriminator(s);
    return leave(s, r);
}

/* A name: nested, local, unscoped (maybe a template), std:: or a
 * substitution with arguments.  *templ: it ends with template arguments,
 * whose summary goes to *ai. */
static part name(st *s, bool *templ, args_info *ai)
{
    *templ = false;
    switch (peek(s)) {
    case 'N': return nested(s, templ, ai);
    case 'Z': return local(s, templ, ai);
    case 'S': {
        bool plain;
        return std_or_sub(s, templ, ai, false, &plain);
    }
    default: break;
    }
    part x = unqualified(s);
    if (peek(s) == 'I') {
        cand(s, x);                     /* an unscoped template name */
        part a = targs(s, ai);
        x.n = add(x.n, a.n);
        x.taint |= a.taint;
        *templ = true;
    }
    return x;
}

/* "F" ["Y"] <type>+ ["R"|"O"] "E" */
static part function_type(st *s)
{
    if (!eat(s, 'F'))
        return bad(s);
    eat(s, 'Y');
    part r = { 48, 0 };
    uint64_t k = 0;
    while (!s->bad) {
        if ((peek(s) == 'R' || peek(s) == 'O') && peek2(s) == 'E')
            s->p++;
        if (peek(s) == 'E')
            break;
        part t = type(s);
        r.n = add(r.n, add(t.n, SEP));
        r.taint |= t.taint;
        k++;
    }
    if (!eat(s, 'E') || !k)
        return bad(s);
    return r;
}

/* Dp <pattern>: the pattern once per element of the pack it expands. */
static part pack_expansion(st *s)
{
    part pat = type(s);
    uint64_t k = 1;
    if (s->eff >= 0 && s->c[s->eff].a.max_pack > k)
        k = s->c[s->eff].a.max_pack;
    return (part){ add(mul(k, add(pat.n, SEP)), 8), pat.taint };
}

static part type_d(st *s)
{
    char d = peek2(s);
    uint64_t k = 0;
    part x;
    switch (d) {
    case 'a': case 'c': case 'd': case 'e': case 'f': case 'h': case 'i': case 'n':
    case 's': case 'u':
        s->p += 2;
        return (part){ BUILTIN, 0 };
    case 'F':                           /* _FloatN, _FloatNx, std::bfloat16_t */
        s->p += 2;
        if (!number(s, NULL, &k) || !(eat(s, '_') || eat(s, 'x') || eat(s, 'b')))
            return bad(s);
        return (part){ BUILTIN + k, 0 };
    case 'p':
        s->p += 2;
        x = pack_expansion(s);
        break;
    case 'v':                           /* __vector(N) */
        s->p += 2;
        if (!number(s, NULL, &k) || !eat(s, '_'))
            return bad(s);
        x = type(s);
        x.n = add(x.n, 24 + k);
        break;
    default:
        return bad(s);
    }
    cand(s, x);
    return x;
}

static part type(st *s)
{
    if (!enter(s))
        return leave(s, bad(s));
    static const char builtins[] = "vwbcahstijlmxynofdegz";
    char c = peek(s);
    part x;
    bool templ = false;
    args_info ai;
    uint64_t k = 0;
    if (c && strchr(builtins, c)) {
        s->p++;
        return leave(s, (part){ BUILTIN, 0 });
    }
    switch (c) {
    case 'u':                           /* vendor builtin */
        s->p++;
        x = source_name(s);
        break;
    case 'r': case 'V': case 'K': case 'P': case 'R': case 'O': case 'C': case 'G':
        s->p++;
        x = type(s);
        x.n = add(x.n, 24);
        break;
    case 'F':
        x = function_type(s);
        break;
    case 'A':                           /* A [N] _ <type> */
        s->p++;
        number(s, NULL, &k);
        if (!eat(s, '_'))
            return leave(s, bad(s));
        x = type(s);
        x.n = add(x.n, 24 + k);
        break;
    case 'M': {                         /* M <class> <member> */
        s->p++;
        if (peek(s) == 'F')             /* a function type as the class */
            return leave(s, bad(s));
        part cl = type(s);
        part mem = type(s);
        /* the printer may write the class twice, around a member function */
        x = (part){ add(mul(add(cl.n, mem.n), 2), 32), cl.taint | mem.taint };
        break;
    }
    case 'T':
        if (peek2(s) == 's' || peek2(s) == 'u' || peek2(s) == 'e')
            return leave(s, bad(s));
        x = template_param(s);
        if (peek(s) == 'I') {           /* a template template parameter */
            cand(s, x);
            part a = targs(s, NULL);
            x.n = add(x.n, a.n);
            x.taint |= a.taint;
        }
        break;
    case 'S': {
        bool plain;
        x = std_or_sub(s, &templ, &ai, true, &plain);
        if (plain)                      /* no new candidate */
            return leave(s, x);
        break;
    }
    case 'D':
        return leave(s, type_d(s));
    case 'N': case 'Z':
        x = name(s, &templ, &ai);
        break;
    default:
        if (!is_digit(c))
            return leave(s, bad(s));
        x = name(s, &templ, &ai);
        break;
    }
    cand(s, x);
    return leave(s, x);
}

/* A function's or a data object's encoding: <name> [<type>*].  A function
 * template's signature is printed with its arguments at hand: its T_ are
 * resolved there, so they do not leave it (local: inside Z ... E). */
static part encoding(st *s)
{
    if (!enter(s))
        return leave(s, bad(s));
    if (s->nc >= CTX_MAX)
        return leave(s, bad(s));
    int me = s->nc++;
    fctx *c = &s->c[me];
    *c = (fctx){ .templ = false };
    char first = peek(s);
    if (first == 'T' || first == 'G')
        return leave(s, bad(s));        /* special names: vtables, guards... */
    bool templ = false;
    args_info ai = { 0 };
    part r = name(s, &templ, &ai);
    if (s->bad)
        return leave(s, r);
    r.n = add(r.n, 64);
    c->templ = templ && ai.seen;
    c->a = ai;
    int saved = s->eff;
    if (c->templ)
        s->eff = me;
    part sig = { 0, 0 };
    while (!s->bad && s->p < s->end && peek(s) != 'E' && peek(s) != '.') {
        part t = type(s);
        sig.n = add(sig.n, add(t.n, SEP));
        sig.taint |= t.taint;
    }
    s->eff = saved;
    if (c->templ)
        sig.taint &= ~ctx_bit(me);
    r.n = add(r.n, sig.n);
    r.taint |= sig.taint;
    return leave(s, r);
}

uint64_t pf_demangle_bound(const char *name_, size_t len)
{
    st s = { .p = name_, .end = name_ + len, .eff = -1 };
    if (len < 3 || name_[0] != '_' || name_[1] != 'Z')
        return 0;
    s.p += 2;
    part r = encoding(&s);
    if (!s.bad && s.p < s.end) {        /* a clone suffix: " [clone .cold.1]" */
        if (*s.p != '.')
            return 0;
        uint64_t k = (uint64_t)(s.end - s.p);
        for (const char *q = s.p; q < s.end; q++)
            if (!(is_digit(*q) || is_lower(*q) || is_upper(*q) || *q == '_' || *q == '.'))
                return 0;
        r.n = add(r.n, add(mul(k, 8), 16));     /* " [clone .a]" per ".a" */
    }
    if (s.bad || r.n >= BIG)
        return 0;
    return r.n;
}
