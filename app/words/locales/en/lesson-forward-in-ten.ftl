## Forward in ten steps (lessons/forward-in-ten.toml: its stops, by phase and recorded name)

lesson-forward-in-ten = Forward in ten steps
    .summary =
        A two-layer model trained to continue repeating letter patterns. Follow one forward pass: letters
        become vectors, attention looks back, and from the first repeat on the model knows what comes next.

lesson-forward-in-ten-forward-embedding =
    .takeaway = Each letter becomes a vector: its row of the embedding table.
    .narration =
        Point at the rows of the output: one row per position, { $n_embd } numbers each. The letter x
        appears at positions 0 and 6, and the two rows are identical: so far the model knows only which
        letter it sees, not where it is.
    .next = Before attention, every row is rescaled to a common size.
    .mark-0 = x
    .mark-1 = x again: the same row

lesson-forward-in-ten-forward-layers-0-attention_norm-out =
    .takeaway = RMSNorm divides each row by its root mean square, then scales each feature by a learned gain.
    .narration =
        Compare the input and the output: the pattern inside each row stays, the overall size is evened out.
        The gain, one number per feature, is the only thing this step learns.
    .next = Now each position asks a question of the positions before it.
    .mark-0 = the learned gain g: one number per feature

lesson-forward-in-ten-forward-layers-0-attention-scores =
    .takeaway =
        A score q̃·k̃/√hd for every pair (query, key), q̃ and k̃ after RoPE; the future is masked to −∞.
    .narration =
        Each panel is one head: queries down, keys across. Everything above the diagonal is blank: a
        position may not look at letters that come after it, so those scores are −∞ before the softmax.
    .next = The softmax turns each row of scores into weights that add up to 1.
    .mark-0 = masked future: −∞

lesson-forward-in-ten-forward-layers-0-attention-probs =
    .takeaway = Each row i is a probability distribution over positions 0 to i: the earlier ones and i itself.
    .narration =
        Look for a head with a bright stripe just below the diagonal: from position { $prev-from } on (row 0
        has no previous letter), head { $prev-head } puts at least { FORMAT($prev-min, spec: ".2f") } of
        every row's weight on the previous letter. That head copies 'which letter came before me' into each
        position, the first half of the trick the second layer uses.
    .next = Layer 1 uses that to look for the letter after an earlier occurrence of the current one.
    .mark-0 = the previous letter

lesson-forward-in-ten-forward-layers-1-attention-probs =
    .takeaway = The induction stripe: attend to the letter that followed this letter last time.
    .narration =
        The text repeats every 6 letters. From position 6, where the first letter comes round again, a
        bright stripe runs 5 positions below the diagonal: there a head looks at the letter that came right
        after an earlier occurrence of the current letter. Head { $first-head } is on it from the start (at
        least { FORMAT($first-min, spec: ".2f") } from position { $first-from } to { $first-to }), and so
        are heads { $s2-head } and { $s3-head } (mean { FORMAT($s2-mean, spec: ".2f") } and
        { FORMAT($s3-mean, spec: ".2f") } from position { $s2-from } on); head { $s1-head } puts only
        { FORMAT($late-value, spec: ".2f") } there at position 6, joins at position { $s1-from } and then
        holds it most firmly, never less than { FORMAT($s1-min, spec: ".2f") }. Once the pattern has been
        seen twice, head { $far-head } moves one repeat further back, to offset { $far-offset } (mean
        { FORMAT($far-mean, spec: ".2f") } from position { $far-from }).
    .next = What those heads read is added into the residual stream, the running sum every block adds to.
    .mark-0 = the induction stripe

lesson-forward-in-ten-forward-layers-1-attention-heads =
    .takeaway = Each head's output is a probability-weighted average of the value vectors.
    .narration =
        Each panel is probs times v for one head: rows are positions, { $head_dim } features per head. Where
        a head attends sharply, its output row is almost a copy of one value vector.
    .next = The heads are joined and projected back into the residual stream.

lesson-forward-in-ten-forward-layers-1-attention_residual =
    .takeaway = The residual add: h = x + attention. Nothing is overwritten, the block only adds.
    .narration =
        Show the two inputs and the output: the output is their sum, entry by entry. This skip connection is
        why gradients can flow straight back to the embedding later.
    .next = The feed-forward block works on each position on its own.

lesson-forward-in-ten-forward-layers-1-feed_forward-swiglu =
    .takeaway =
        SwiGLU: silu(gate) times up, { $ffn_hidden } features per position, no mixing between positions.
    .narration =
        Compare gate, up and their product: where silu(gate) is near zero the feature is switched off
        whatever up says. The same weights apply to every position; only attention mixes positions.
    .next = A final RMSNorm, then a score for every letter of the alphabet.

lesson-forward-in-ten-forward-logits =
    .takeaway = Logits: one score per letter of the vocabulary, for every position.
    .narration =
        Columns are the { $V } letters. The boxes mark the letter that actually comes next at each position.
        In the first six positions the model has nothing to go on; from the first repeat on the boxed scores
        stand out: at the last position the largest score is { $last-label }'s, the letter that comes next.
    .next = The softmax turns the scores into probabilities.
    .mark-0 = the next letter

lesson-forward-in-ten-loss-output_probs =
    .takeaway = p(next letter): low while the pattern is new, close to 1 once it repeats.
    .narration =
        Each row adds up to 1. Point at the boxed target cells: dark in the first rows (p(target) at most
        { FORMAT($sure-before, spec: ".2f") } before position { $sure-from }), bright from position
        { $sure-from }, the second letter of the first repeat, to the end (at least
        { FORMAT($sure-min, spec: ".2f") }). That contrast is the whole story of the induction heads, and
        the loss, −log p(target), is small exactly where it is bright.
    .next = Next lesson: the loss and the first gradient.
    .mark-0 = p(target) from the first repeat on
