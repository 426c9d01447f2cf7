# Screen test: the Flame on a torch.profiler trace made with with_stack
# (tests/fixtures/kineto2/workers.pt.trace.json.gz): Python frames
# ("torch/autograd/__init__.py(255): backward") and built-ins ("<built-in
# method run_backward of torch._C._EngineBase object at 0x...>") in narrow
# frames keep an honest label: the function or the built-in's NAME, cut
# with an ellipsis, never a file shortened to one letter ("…a/_.py(255):
# backward" reads like a file named _.py) nor every word to one letter
# ("…m r….>").  The Tree shortens names the same way (tui/namefit.c).
. tests/screen/lib.sh
F=tests/fixtures/kineto2/workers.pt.trace.json.gz
# no label anywhere on the screen that reads like a shortened file or words
honest() {
    screen | grep -E '(^|[^[:alnum:]_])[[:alnum:]_]\.py|\.p:|(^|[^[:alnum:]_])[a-z] [a-z]([^[:alnum:]_]|$)' &&
        fail "$1: a file or words shortened to one letter"
    return 0
}
start 120 40 "NO_COLOR=1 LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm $TOP $F"
wait_for "1 Summary"
type_keys 3; wait_for "^ all  \["
honest "whole flame"
# select run_backward's caller and zoom into main: narrow frames of the step
type_keys / r u n _ b a c k w a r d Enter
wait_for "^ frames under torch/autograd/graph\.py\(966\): _engine_run_backward"
type_keys k k k Enter; wait_for "^ all > .* > kineto2_loop\.py\(64\): main  \["
honest "zoomed into main"
expect "[|*>]run_ba"                        # the built-in's name, not "<b…"
expect "[|*>]…backward "                    # the function, its file gone whole
# the Tree: the same names in a narrow column
resize 60 30
type_keys 2; wait_for "2 Tree|2 Tre"
honest "Tree at 60 columns"
type_keys q; wait_for "__EXIT__ 0"
echo ok
