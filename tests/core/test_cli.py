import subprocess
import sys


def test_xt_gradcheck_prints_every_tensor_passing():
    result = subprocess.run(
        [sys.executable, "-m", "xt_cli", "gradcheck", "--preset", "tiny", "--max-entries", "8", "--seq", "6"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "layers.1.attention.probs" in out and "tok_embeddings" in out
    assert "FAIL" not in out
    assert "62 passed, 0 failed" in out


def test_xt_gradcheck_checks_every_tensor_of_a_gpt2():
    result = subprocess.run(
        [sys.executable, "-m", "xt_cli", "gradcheck", "--preset", "gpt2-tiny", "--max-entries", "8", "--seq", "6"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "pos_embeddings" in out and "layers.1.feed_forward.b1" in out and "embedding_positions" in out
    assert "FAIL" not in out
    assert "73 passed, 0 failed" in out  # 36 parameters (weights, biases, gains) and 37 recorded tensors
