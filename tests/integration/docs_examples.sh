# docs/extending.md stays true: every code block preceded by "<!-- from: PATH -->" must appear,
# verbatim, in that file of the repository. (It also runs `ember config --kinds`, which the page
# shows, and checks the worked example's kind is listed.)
source "$(dirname "$0")/lib_common.sh"
"$PY" - "$EMBER_SOURCE_DIR" <<'PY' || fail "docs/extending.md quotes code that is not in the repository"
import re, sys
root = sys.argv[1]
doc = open(f"{root}/docs/extending.md").read()
blocks = re.findall(r"<!-- from: (\S+) -->\n```cpp\n(.*?)```", doc, re.S)
assert len(blocks) >= 5, f"expected at least 5 quoted blocks, found {len(blocks)}"
for path, code in blocks:
    source = open(f"{root}/{path}").read()
    assert code.strip() in source, f"the block quoted from {path} no longer matches it:\n{code[:200]}"
print(len(blocks), "blocks match their files")
PY
"$EMBER" config --kinds | grep -q "short_conv .*no attention" || fail "config --kinds does not list short_conv"
"$EMBER" config --kinds | grep -q 'options model.mixer.short_conv: {"kernel":4}' || fail "config --kinds options"
"$EMBER" config --kinds | grep -q "^model.mlp.kind:" || fail "config --kinds does not list the feed-forward kinds"
echo "docs/extending.md matches the code"
