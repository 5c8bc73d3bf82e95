# The quiz's own weights (issue 35): what a quiz keeps from a learner until the answer.
quiz-weights-hidden = a quiz runs on weights of its own, hidden until you answer it (a class's: until its presenter reveals): { $name } is one of them. Check each op's backward against the numbers its step shows, or spend a probe (POST /api/traces/{ $trace_id }/quiz/probe)
quiz-update-hidden = a quiz's update step would show its hidden weights (weight decay moves each weight by a share of itself): answer the quiz first (a class's: wait for its presenter's reveal)
quiz-probes-spent-address = the learners at your address have probed { $most } steps of this quiz, all a single learner may: probe one of those steps again (free), or answer
quiz-probes-store-down = the store that counts a quiz's probes (Redis) did not answer ({ $reason }): retry in a few seconds
