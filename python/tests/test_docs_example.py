"""The example of docs/python.md runs as written and its model learns."""
import re

import torch

from conftest import REPO


def test_the_docs_example_runs_and_learns(capsys):
    text = (REPO / "docs" / "python.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    scope = {}
    exec(compile(code, "docs/python.md", "exec"), scope)
    loss = float(re.search(r"loss ([0-9.]+)", capsys.readouterr().out).group(1))
    assert loss < 0.8 * torch.log(torch.tensor(1000.0)).item()  # below chance after 20 steps on one batch
    ids = scope["ids"]
    torch.testing.assert_close(scope["compiled"](ids[:, :-1], ids[:, 1:]), scope["model"](ids[:, :-1], ids[:, 1:]),
                               rtol=1e-4, atol=1e-5)
