/*
 * link_readme.c - the README's example program ("Instrumenting a program")
 * made whole for tests/link_test.sh: the functions it calls, then the block
 * itself, which the test extracts from README.md into readme_example.inc.
 * The same file is built as C and as C++.
 */
#include <stdint.h>

static volatile double sink;
static double loss = 4.0;

static void work(int n)
{
    for (int i = 0; i < n; i++)
        sink = sink + i;
}

static void load(void) { work(2000); }
static void forward(void) { work(4000); }
static void backward(void) { work(6000); loss = loss * 0.99; }

#include "readme_example.inc"
