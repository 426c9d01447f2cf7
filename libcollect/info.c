/*
 * info.c - facts the program learns while it runs, written as INFO
 * (format section 7.10) by the writer with its next flush.  The Python
 * module's adaptive module regions say here which modules they folded
 * (INFO torch.modules.*).  A short list under the session lock, in the
 * order given; a key given again is written again (a reader keeps the
 * later value).  Bounded: at most INFO_MAX entries wait between two
 * flushes, texts at most PRISM_MAX_STRING_BYTES (longer ones cut).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define INFO_MAX 64
#define KEY_MAX 128

struct pc_info {
    pc_info *next;
    prism_value v;              /* v.s points into text[] for a text     */
    char key[KEY_MAX];
    char text[];
};

static bool live(session *s)
{
    return s && !session_forked(s) && !atomic_load(&s->stopping) && !atomic_load(&s->failed);
}

static bool put(const char *key, const prism_value *v)
{
    session *s = prism__s;
    if (!live(s) || !key || !*key || strlen(key) >= KEY_MAX)
        return false;
    size_t tlen = 0;
    if (v->type == PRISM_VAL_TEXT) {
        if (!v->v.s)
            return false;
        tlen = strnlen(v->v.s, PRISM_MAX_STRING_BYTES);
    }
    pc_info *e = malloc(sizeof *e + tlen + 1);
    if (!e)
        return false;
    e->next = NULL;
    e->v = *v;
    strcpy(e->key, key);
    if (v->type == PRISM_VAL_TEXT) {
        memcpy(e->text, v->v.s, tlen);
        e->text[tlen] = '\0';
        e->v.v.s = e->text;
    }
    bool ok = false;
    pthread_mutex_lock(&s->lock);
    if (s->ninfo < INFO_MAX) {
        pc_info **p = &s->info;
        while (*p)
            p = &(*p)->next;
        *p = e;
        s->ninfo++;
        ok = true;
    }
    pthread_mutex_unlock(&s->lock);
    if (!ok)
        free(e);
    return ok;
}

bool prism__info_text(const char *key, const char *text)
{
    prism_value v = { .type = PRISM_VAL_TEXT, .v.s = text };
    return put(key, &v);
}

bool prism__info_uint(const char *key, uint64_t value)
{
    prism_value v = { .type = PRISM_VAL_UINT, .v.u = value };
    return put(key, &v);
}

pc_info *pc_info_take(session *s)
{
    pc_info *l = s->info;
    s->info = NULL;
    s->ninfo = 0;
    return l;
}

const char *pc_info_key(const pc_info *e, const prism_value **v)
{
    *v = &e->v;
    return e->key;
}

const pc_info *pc_info_next(const pc_info *e)
{
    return e->next;
}

void pc_info_free(pc_info *l)
{
    while (l) {
        pc_info *n = l->next;
        free(l);
        l = n;
    }
}
