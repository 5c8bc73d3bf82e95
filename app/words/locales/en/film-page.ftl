# The film of a recorded run (templates/film.html, static/js/film.js; docs/film.md)
film-page-title = Training as a film
film-page-lede = The recorded run { $run }: { $steps ->
        [one] { $steps } step
       *[other] { $steps } steps
    } of training. Above, the loss; below it, every head's induction score and previous-token score at each step.
film-page-scrub = Step
film-page-loading = Reading the run…
film-page-open = Open this step in the walkthrough
film-page-help = Move through the run with ← and → (one step), PageUp and PageDown (a twentieth of the run), Home and End, or click the figure.
film-page-plot = The loss and every head's scores over the steps of the run { $run }; the chosen step is marked by a vertical line.
film-page-attention = A head's attention pattern at a step is one click away: open the step, then its layer's attention op. Each open rebuilds the step from the run's nearest checkpoint before it, so a checkpoint's step opens at once and a step far from one takes longer.
film-page-choose = Choose a recorded run to watch.
film-page-run = { $run } ({ $task }, { $steps ->
        [one] { $steps } step
       *[other] { $steps } steps
    })
film-page-none = This server offers no recorded runs. Record one with xt train --record RUN and serve it with xt serve --runs DIR.
# The walk page of a run's step (templates/_training_bar.html, templates/_walk_summary.html)
film-walk-back = Back to the film at step { $step }
film-walk-fixed = This step belongs to a recorded run: the run fixes its training, so there is nothing to train more here.
# The film's figure and readout (static/js/film.js, static/js/film/figure.js)
js-film-loss = loss
js-film-induction = induction score
js-film-previous = previous-token score
js-film-step = training step
js-film-head = layer { $layer }, head { $head }
js-film-readout = Step { $step }: loss { $loss }; the best induction score { $induction } (layer { $inductionLayer }, head { $inductionHead }); the best previous-token score { $previous } (layer { $previousLayer }, head { $previousHead }).
js-film-readout-checkpoint = Step { $step } (a checkpoint: it opens at once): loss { $loss }; the best induction score { $induction } (layer { $inductionLayer }, head { $inductionHead }); the best previous-token score { $previous } (layer { $previousLayer }, head { $previousHead }).
js-film-failed = The run could not be read: { $error }
# The home page's way to the shipped run's film (templates/_home_ways.html)
film-home-way = Watch an induction head form
