# The film of a recorded run (templates/film.html, static/js/film.js; docs/film.md)
film-page-title = Training as a film
film-page-lede = The recorded run { $run }: { $steps ->
        [one] { $steps } step
       *[other] { $steps } steps
    } of training. Above, the loss; below it, every head's induction score and previous-token score at each step. A head's induction score is the attention it puts on the token that followed an earlier copy of the current one; its previous-token score, the attention it puts on the token just before (both measured at every step on the same repeated random tokens).
film-page-scrub = Step
film-page-loading = Reading the run…
film-page-open = Open this step in the walkthrough
film-page-help = Move through the run with ← and → (one step), PageDown and PageUp (a twentieth of the run on or back: a clicker works), Home and End, or click the figure.
film-page-plot = The loss and every head's scores over the steps of the run { $run }; the chosen step is marked by a vertical line.
film-page-attention = The squares above show the probe sequence. A head's attention on the step's own batch needs the step rebuilt from the run's checkpoint at or before it: at once at a checkpoint, about a second for every hundred steps past one. So it is drawn when you ask, for the step the scrubber is on (the walkthrough of the step shows it too, at its layer's attention op).
film-page-attention-show = Show the attention at this step
film-page-choose = Choose a recorded run to watch.
film-page-run = { $run } ({ $task }, { $steps ->
        [one] { $steps } step
       *[other] { $steps } steps
    })
film-page-none = This server offers no recorded runs yet. Record one below, or with xt train --record RUN and serve it with xt serve --runs DIR.
# The walk page of a run's step (templates/_training_bar.html, templates/_walk_summary.html)
film-walk-back = Back to the film at step { $step }
film-walk-trained = { $steps ->
        [0] the run's first step: its weights are the initial ones
        [one] { $steps } step of the run's training before this one
       *[other] { $steps } steps of the run's training before this one
    }
film-walk-fixed = This step belongs to a recorded run: the run fixes its training, so there is nothing to train more here.
# The film's figure and readout (static/js/film.js, static/js/film/figure.js)
js-film-loss = loss
# the score panels' axis titles: short, a panel is about 120 px tall (the readout names the scores in full)
js-film-induction = induction
js-film-previous = previous token
js-film-step = training step
js-film-head = layer { $layer }, head { $head }
js-film-readout = Step { $step }: loss { $loss }; the best induction score { $induction } (layer { $inductionLayer }, head { $inductionHead }); the best previous-token score { $previous } (layer { $previousLayer }, head { $previousHead }).
js-film-readout-checkpoint = Step { $step } (a checkpoint: it opens at once): loss { $loss }; the best induction score { $induction } (layer { $inductionLayer }, head { $inductionHead }); the best previous-token score { $previous } (layer { $previousLayer }, head { $previousHead }).
js-film-attention-building = Rebuilding step { $step } ({ $replayed ->
        [0] a checkpoint
        [one] { $replayed } step replayed from the checkpoint before it
       *[other] { $replayed } steps replayed from the checkpoint before it
    })…
js-film-attention-shown = The attention of every head at step { $step }, on the run's first sequence of that step's batch.
js-film-failed = The run could not be read: { $error }
# The home page's way to the shipped run's film (templates/_home_ways.html)
film-home-way = The film of a training run: scrub through it step by step
