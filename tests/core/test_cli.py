import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    "preset,shown,passed",
    [
        ("tiny", ("layers.1.attention.probs", "tok_embeddings"), 62),
        # GPT-2: 36 parameters (weights, biases, gains, the position table) and 37 recorded tensors
        ("gpt2-tiny", ("pos_embeddings", "layers.1.feed_forward.b1", "embedding_positions"), 73),
    ],
)
def test_xt_gradcheck_prints_every_tensor_passing(preset, shown, passed):
    result = subprocess.run(
        [sys.executable, "-m", "xt_cli", "gradcheck", "--preset", preset, "--max-entries", "8", "--seq", "6"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert all(name in out for name in shown)
    assert "FAIL" not in out
    assert f"{passed} passed, 0 failed" in out
