# The page's script: the classroom (static/js/class/*.js): the poll, presenting, following the
# presenter, the lesson player.

js-poll-not-known = not known yet
js-poll-the-bug = The bug:
js-poll-broken-step = Broken step:
js-poll-first-failing = First failing gradient check:
js-poll-go-broken = Go to the broken step
js-poll-column = step { $number }: { $title } — { $count } answer(s)
js-poll-caption = { $answers } answer(s) · backward steps, from the loss (left) to the embedding (right)
js-poll-no-answers = No answers yet.
js-poll-by-step = Answers by step
js-poll-answered = : { $title } — { $count } { $count ->
        [one] answer
       *[other] answers
    }
js-poll-open = Open poll: which step is broken?
js-poll-close = Close poll
js-poll-reveal = Reveal the bug
js-poll-status-open = Poll open: answers come in live.
js-poll-status-revealed = Revealed on every screen.
js-poll-choice = The broken step
js-poll-pick = Pick a step…
js-poll-answer = Answer
js-poll-pick-first = Pick the step you think is broken first.
js-poll-your-answer = Your answer: step { $number }. You can change it until the poll closes.
js-poll-question = Which step is broken?
js-poll-question-help = Pick the backward step where the gradients first go wrong.
js-poll-closed = The poll is closed.
js-poll-closed-answer = The poll is closed. Your answer: step { $number }.
js-class-move-failed = Could not move the class: { $error }
js-class-following = { $count } following
js-class-keep = Keep presenting
js-class-end-confirm = End the class on every student's screen?
js-class-badge = Class { $code }
js-class-show-code = Show code
js-class-end = End class
js-class-idle = The session ended (idle too long). Present again to open a new one.
js-class-end-failed = Could not end the class: { $error }
js-class-ended = Class { $code } ended: every student's page is theirs again.
js-follow-exploring = Exploring on your own · class { $code }
js-follow-following = Following the presenter · class { $code }
js-follow-cannot = Cannot follow class { $code }: { $error }
js-follow-ended = Class ended (class { $code }): the page is yours to explore.
js-follow-lost = Lost class { $code }: reload the page to try again.
js-follow-back = Back to presenter
js-follow-detach = Explore on my own
js-follow-ended-notice = Class ended (class { $code }). The page is yours: explore on your own. ✕
js-lesson-claims = Checked against the trace
js-lesson-prev = Prev
js-lesson-next = Next
js-lesson-more = More
js-lesson-play = ▶ Play
js-lesson-pause = ❚❚ Pause
js-lesson-pace = Seconds per step
js-lesson-pace-option = { $seconds } s a step
js-lesson-leave = Full walkthrough ✕
js-lesson-label = Lesson: { $title }
js-lesson-claim = Checked against { $against }: { $claimed }; { $measured }.
js-lesson-stop = · stop { $stop } of { $stops }
js-lesson-next-stop = Next: { $next }
js-lesson-off-path = Off the lesson's path.
js-lesson-back = Back to the lesson
js-classroom-lesson = { $title } ({ $steps } steps)
js-classroom-no-lesson = none: the full walkthrough
js-classroom-others = other models and texts
js-classroom-session-failed = Could not open a session: { $error }
js-classroom-failed = The classroom tools could not start: { $error }
js-poll-by-address = Answers per address (a class behind one router is one address):
js-poll-address = { $address } — { $count } { $count ->
        [one] answer
       *[other] answers
    }
