## Watch an induction head form (lessons/induction-head.toml: a lesson about the recorded run
## "induction"; a film stop is lesson-induction-head-film-<step>, a run step's stop
## lesson-induction-head-step-<step>-<phase>-<recorded name, dots as dashes>)

lesson-induction-head = Watch an induction head form
    .summary =
        The recorded training of the induction model, { $run_steps } steps: the loss sits on a plateau,
        then drops as a previous-token head in layer 0 and induction heads in layer 1 appear together.
        Scrub the film, open steps before and after, and see which part of the gradient builds the head.

lesson-induction-head-film-0 =
    .takeaway = A film of training: the loss and every head's scores at each of { $run_steps } steps.
    .narration =
        The loss is the mean of −log p(target) over a batch: how surprised the model is by the next token
        ({ FORMAT($start, spec: ".2f") } over steps { $start-from } to { $start-to }). An attention head is one of the
        { $n_head } parallel attentions of a layer; each has two scores, measured every step on the same
        repeated random tokens. Its induction score is the attention it puts on the token that followed an
        earlier copy of the current one; its previous-token score, the attention it puts on the token just
        before. The run trains on batches of { $batch } sequences with a learning rate of { $lr }.
    .next = Move on through the first few hundred steps: what does the loss do?

lesson-induction-head-film-400 =
    .takeaway = The plateau: { $plateau } steps on which the loss barely moves.
    .narration =
        A plateau is a stretch where the loss, averaged over { $plateau-window } steps, falls by less than
        { FORMAT($plateau-max_fall, spec: ".2g") } per 100 steps.
        Here it runs from step { $plateau-first } to step { $plateau-last }, at a loss near
        { FORMAT($plateau-loss, spec: ".2f") }: below { FORMAT($uniform_loss, spec: ".2f") } (ln { $V }, a uniform
        guess among the { $V } letters), so the model already uses which letters the sequence has shown, but
        not yet where they repeat. Point at the two score panels: every line stays low.
    .next = Open step { $prev_early-at }, on the plateau: what does layer 0's attention do?
    .mark-0 = the plateau

lesson-induction-head-step-500-forward-layers-0-attention-probs =
    .takeaway = On the plateau, no head of layer 0 looks at the previous token yet.
    .narration =
        Step { $prev_early-at } is a checkpoint (the weights and the optimizer's state saved there), so it opens at once.
        The marked diagonal is the previous token; no head makes it bright. Layer 0's heads with a
        previous-token score above { FORMAT($prev_early-above, spec: ".2g") }: { $prev_early-count ->
            [0] none
           *[other] { $prev_early }
        }; head { $prev_best-head } scores { FORMAT($prev_best, spec: ".2f") }.
    .next = And layer 1, which will hold the induction heads?
    .mark-0 = the previous token: key = query − 1

lesson-induction-head-step-500-forward-layers-1-attention-probs =
    .takeaway = Layer 1 does not yet look where a copy would tell it the next token.
    .narration =
        In each sequence of the batch a segment of random tokens repeats. An induction head, at a repeated
        token, would look at the token after that token's earlier copy and copy it forward. Layer 1's heads
        with an induction score above { FORMAT($ind_early-above, spec: ".2g") } at step { $ind_early-at }: { $ind_early-count ->
            [0] none
           *[other] { $ind_early }
        }.
    .next = Back to the film: watch layer 0's previous-token score.

lesson-induction-head-film-746 =
    .takeaway = First, a previous-token head: layer 0's best score passes { FORMAT($prev_rise-above, spec: ".2g") } at step { $prev_rise }.
    .narration =
        Look at the lowest panel: one of layer 0's dotted lines leaves the others at step { $prev_rise }
        (head { $prev_rise-head }, { FORMAT($prev_rise-score, spec: ".2f") }). A head that copies the
        previous token into each position is what an induction head in layer 1 needs to read.
    .next = Now the loss.
    .mark-0 = previous-token score past { FORMAT($prev_rise-above, spec: ".2g") }

lesson-induction-head-film-769 =
    .takeaway = The drop: the loss falls fastest at step { $steepest }.
    .narration =
        Over steps { $before-from } to { $before-to } the loss averages
        { FORMAT($before, spec: ".2f") }; over steps { $after-from } to { $after-to }, { FORMAT($after, spec: ".2f") }.
        The fall is steepest at step { $steepest }, in the middle of the heads forming: the repeats become
        predictable.
    .next = When does layer 1's induction head appear?
    .mark-0 = before
    .mark-1 = after

lesson-induction-head-film-801 =
    .takeaway = Layer 1's best induction score passes { FORMAT($passes-above, spec: ".2g") } at step { $passes }.
    .narration =
        In the middle panel, layer 1's solid lines climb together, head { $passes-head } first past { FORMAT($passes-above, spec: ".2g") } at
        step { $passes } ({ FORMAT($passes-score, spec: ".2f") }), soon after layer 0's previous-token head
        passed { FORMAT($prev_rise-above, spec: ".2g") } (step { $prev_rise }): the two kinds of head form
        together, one reading the other.
    .next = Which gradient builds it? Open step { $steepest }'s backward.
    .mark-0 = induction score past { FORMAT($passes-above, spec: ".2g") }

lesson-induction-head-step-769-backward-layers-1-attention-k =
    .takeaway = The gradient of layer 1's W_K reads the previous-token heads: K-composition.
    .narration =
        Layer 1's keys are its input times W_K, its key weights; that input is the residual stream, the
        sum of what the token embedding, layer 0's heads and its feed-forward wrote. So the gradient of
        W_K splits into one part per write (docs/film.md). Over the { $kcomp-ahead } steps from step
        { $kcomp-step }, the parts reading layer 0's heads { $kcomp-heads } carry a share of
        { FORMAT($kcomp, spec: ".2f") } of the whole gradient (their projection onto it, as a fraction of its
        length; all parts' shares add up to 1), and each points closer to where W_K actually moved than
        the other heads' parts: its cosine with W_K's change (1 would be the same direction, 0 unrelated) is
        at least { FORMAT($kcomp-cosine, spec: ".2f") }, theirs at most { FORMAT($kcomp-others, spec: ".2f") }.
        Layer 1's keys learn to read the token before: K-composition, a head of layer 1 reading through
        its keys what a head of layer 0 wrote. The film's "Which gradients build the head" draws every part.
    .next = After the drop, open step { $prev_heads-at }.

lesson-induction-head-step-1000-forward-layers-0-attention-probs =
    .takeaway = After the drop, layer 0 has previous-token heads: { $prev_heads }.
    .narration =
        The marked diagonal, the previous token, is now bright in some heads. Layer 0's heads with a
        previous-token score above { FORMAT($prev_heads-above, spec: ".2g") } at step { $prev_heads-at }: { $prev_heads } (the lowest
        { FORMAT($prev_heads-least, spec: ".2f") }, the others at most { FORMAT($prev_heads-rest, spec: ".2f") }).
    .next = And in layer 1?
    .mark-0 = the previous token

lesson-induction-head-step-1000-forward-layers-1-attention-probs =
    .takeaway = Layer 1 has induction heads: { $ind_heads }.
    .narration =
        Look at a sequence's repeated part: a head's attention jumps back one period, to the token after
        the current one's earlier copy. Layer 1's heads with an induction score above { FORMAT($ind_heads-above, spec: ".2g") } at step { $ind_heads-at }:
        { $ind_heads } (the lowest { FORMAT($ind_heads-least, spec: ".2f") }).
    .next = Back to the film for the end of the run.

lesson-induction-head-film-1499 =
    .takeaway = The heads stay; the loss settles near { FORMAT($end, spec: ".2f") }.
    .narration =
        Over steps { $end-from } to { $end-to } the loss averages { FORMAT($end, spec: ".2f") }, against
        { FORMAT($before, spec: ".2f") } before the drop. Scrub the film yourself: any step opens in the
        walkthrough, at once on a checkpoint and, elsewhere, after the steps since the last one are replayed.
