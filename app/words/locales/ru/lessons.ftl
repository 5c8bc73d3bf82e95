# Что говорят проверенные утверждения урока (app/lessons/claims.py): что утверждает урок, что
# измерено на трассе и на какой трассе. Имена тензоров и шагов ($name, $step) — записанные имена,
# их не переводят; FORMAT($x, spec: ".3g") печатает число по формату Python с десятичной запятой.

lesson-against-this-trace = эта трасса
lesson-against-faults = спецификация этой трассы с ошибкой { $faults }
lesson-against-correct = спецификация этой трассы, верный обратный проход

lesson-phase-forward = прямой проход
lesson-phase-loss = функция потерь
lesson-phase-backward = обратный проход
lesson-phase-update = обновление

## Границы и знаки: условие утверждения о значении

lesson-bound-between = от { FORMAT($low, spec: ".3g") } до { FORMAT($high, spec: ".3g") }
lesson-bound-at-least = не меньше { FORMAT($low, spec: ".3g") }
lesson-bound-at-most = не больше { FORMAT($high, spec: ".3g") }
lesson-sign-positive = больше нуля
lesson-sign-negative = меньше нуля
lesson-sign-zero = ровно ноль
lesson-condition-both = { $bound } и { $sign }

## Утверждение: что говорит урок

lesson-claim-stripe = голова { $head } отдаёт диагонали со сдвигом { $offset } (ключ − запрос) вес не меньше { FORMAT($weight, spec: ".3g") } у каждого запроса начиная с позиции { $first }
lesson-claim-stripe-to = голова { $head } отдаёт диагонали со сдвигом { $offset } (ключ − запрос) вес не меньше { FORMAT($weight, spec: ".3g") } у каждого запроса с позиции { $first } по { $last }
lesson-claim-target = p(цели) остаётся выше { FORMAT($above, spec: ".3g") } с позиции { $first } до конца
lesson-claim-target-not-before = p(цели) остаётся выше { FORMAT($above, spec: ".3g") } с позиции { $first } до конца, но не на позиции { $before }
lesson-claim-gradcheck-passes = проверка градиента шага { $step } ({ $phase }) проходит
lesson-claim-gradcheck-fails = проверка градиента шага { $step } ({ $phase }) не проходит
lesson-claim-failing-only = проверку не проходят шаги обратного прохода { $steps }
lesson-claim-failing-none = все шаги обратного прохода проходят проверку
lesson-claim-failing-first = первый шаг обратного прохода, не прошедший проверку, — { $step }
lesson-claim-identity = max |dL/dlogits − (p − onehot)/N| — { $condition }
lesson-claim-entry-value = { $name }{ $at } — { $condition }
lesson-claim-entry-grad = dL/d{ $name }{ $at } — { $condition }
lesson-claim-entry-contribution = вклад этого шага в dL/d{ $name }{ $at } — { $condition }
lesson-claim-sum-value = сумма { $name }{ $at } — { $condition }
lesson-claim-sum-grad = сумма dL/d{ $name }{ $at } — { $condition }
lesson-claim-sum-contribution = сумма вклада этого шага в dL/d{ $name }{ $at } — { $condition }
lesson-claim-norm-value = норма { $name }{ $at } — { $condition }
lesson-claim-norm-grad = норма dL/d{ $name }{ $at } — { $condition }
lesson-claim-norm-contribution = норма вклада этого шага в dL/d{ $name }{ $at } — { $condition }
lesson-claim-max_abs-value = наибольший |элемент| { $name }{ $at } — { $condition }
lesson-claim-max_abs-grad = наибольший |элемент| dL/d{ $name }{ $at } — { $condition }
lesson-claim-max_abs-contribution = наибольший |элемент| вклада этого шага в dL/d{ $name }{ $at } — { $condition }
lesson-claim-rows-value = строка наибольшей нормы в { $name }{ $at } — { $label }
lesson-claim-rows-grad = строка наибольшей нормы в dL/d{ $name }{ $at } — { $label }
lesson-claim-rows-contribution = строка наибольшей нормы во вкладе этого шага в dL/d{ $name }{ $at } — { $label }
lesson-claim-entries-value = наибольший элемент { $name }{ $at } — { $label }
lesson-claim-entries-grad = наибольший элемент dL/d{ $name }{ $at } — { $label }
lesson-claim-entries-contribution = наибольший элемент вклада этого шага в dL/d{ $name }{ $at } — { $label }

## Измерено: что говорит трасса

lesson-measured-stripe = наименьший вес { FORMAT($least, spec: ".3g") }, средний { FORMAT($mean, spec: ".3g") }
lesson-measured-target-from = с позиции { $first } (не меньше { FORMAT($least, spec: ".3g") })
lesson-measured-target-from-before = с позиции { $first } (не меньше { FORMAT($least, spec: ".3g") }); до неё не больше { FORMAT($before, spec: ".3g") }
lesson-measured-target-never = ни с какой позиции; не больше { FORMAT($before, spec: ".3g") }
lesson-measured-gradcheck-passes = проходит: отн. ошибка { FORMAT($error, spec: ".2g") } (допуск { FORMAT($tolerance, spec: ".0e") })
lesson-measured-gradcheck-fails = не проходит: отн. ошибка { FORMAT($error, spec: ".2g") } (допуск { FORMAT($tolerance, spec: ".0e") })
lesson-measured-failing = не проходят: { $steps } (первый: отн. ошибка { FORMAT($error, spec: ".2g") })
lesson-measured-failing-more = не проходят: { $steps } и ещё { $more } (первый: отн. ошибка { FORMAT($error, spec: ".2g") })
lesson-measured-failing-none = не проходит ни один
lesson-measured-first = первый не прошедший: { $step }, отн. ошибка { FORMAT($error, spec: ".2g") }
lesson-measured-first-none = не проходит ни один
lesson-measured-value = измерено { FORMAT($value, spec: ".3g") }
lesson-measured-label = измерено: { $label } ({ FORMAT($score, spec: ".3g") })
