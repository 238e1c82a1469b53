# The layers include only downward (docs/architecture.md): util < io < config < data, kernels <
# model < run < eval, analysis < train < experiment < tools, python/csrc. Reads every
# #include "ember/..." or <ember/...> of src/ (sources and private headers), include/, kernels/ and
# python/csrc/, and fails on an edge that reaches up or sideways or names a layer that does not exist.
source "$(dirname "$0")/lib_common.sh"
"$PY" - "$EMBER_SOURCE_DIR" <<'PY' || fail "a layer includes upward"
import pathlib, re, sys
root = pathlib.Path(sys.argv[1])
rank = {"util": 0, "io": 1, "config": 2, "data": 3, "kernels": 3, "distributed": 3, "model": 4, "run": 5,
        "eval": 6, "analysis": 6, "interop": 6, "train": 7, "experiment": 8, "python": 9}
edges, bad = 0, []
files = [*root.glob("src/*/**/*.cpp"), *root.glob("src/*/**/*.h"), *root.glob("include/ember/*/**/*.h"),
         *root.glob("kernels/*.cpp"), *root.glob("kernels/*.h"), *root.glob("kernels/*.cu"),
         *root.glob("python/csrc/*.cpp"), *root.glob("python/csrc/*.h")]
for f in files:
    rel = f.relative_to(root).parts
    layer = rel[0] if rel[0] in ("kernels", "python") else rel[1] if rel[0] == "src" else rel[2]
    assert layer in rank, f"{f}: unknown layer '{layer}'"
    for inc in re.findall(r'#include ["<](?:ember/(\w+)|kernels)/', f.read_text()):
        target = inc or "kernels"
        if target not in rank:
            bad.append(f"{f.relative_to(root)} includes ember/{target}/, which is no layer")
            continue
        edges += 1
        if target != layer and rank[target] >= rank[layer]:
            bad.append(f"{f.relative_to(root)} ({layer}) includes {target}")
assert edges > 200, f"only {edges} includes found: is the tree there?"
assert not bad, "\n".join(bad)
print(f"{len(files)} files, {edges} includes, all downward")
PY
echo "layers include only downward"
