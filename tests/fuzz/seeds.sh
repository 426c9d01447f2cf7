#!/bin/sh
# seeds.sh B OUT - the fuzz targets' seed corpus, made by the project's own
# writers: small refprofile and trainloop runs into OUT/reader/, the same
# with 8 control bytes in front (the piece lengths) into OUT/feed/, and both
# plus the torch.profiler fixtures into OUT/compare/.  `make fuzz` calls it.
set -eu
B=$1 OUT=$2
mkdir -p "$OUT/reader" "$OUT/feed" "$OUT/compare"
r=$OUT/reader
n=0
ref() {
    n=$((n + 1))
    "$B/bin/refprofile" -o "$r/ref$n.cbor" "$@" >/dev/null
}
ref --steps 2
ref --steps 3 --threads 2 --seed 2
ref --steps 2 --extremes
ref --steps 3 --no-footer --seed 3
ref --steps 2 --cpu --seed 4
ref --steps 4 --chunk-bytes 256 --seed 5
ref --steps 2 --stall-ns 1000000 --threads 3 --seed 6
"$B/bin/trainloop" --output "$r/train1.cbor" --steps 4 --epochs 1 >/dev/null 2>&1
"$B/bin/trainloop" --output "$r/train2.cbor" --steps 3 --epochs 1 --workers 2 >/dev/null 2>&1
i=0
for f in "$r"/*.cbor; do
    i=$((i + 1))
    b=$(basename "$f")
    # piece-length seeds: all small pieces, then mixed ones
    printf '\001\000\000\000\000\000\000\000' | cat - "$f" >"$OUT/feed/$b"
    { printf '\377'; printf "\\$(printf %03o "$i")"; printf '\052\000\007\000\000\200'; cat "$f"; } \
        >"$OUT/feed/mixed-$b"
    cp "$f" "$OUT/compare/$b"
done
for f in tests/fixtures/kineto/*.json tests/fuzz/corpus/*.json; do
    [ -f "$f" ] && [ "$(wc -c <"$f")" -le 65536 ] && cp "$f" "$OUT/compare/"
done
exit 0
