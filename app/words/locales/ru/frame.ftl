# Рамка каждой страницы (templates/base.html): ссылка «к содержимому», шапка, выбор языка.

language-name = Русский
frame-skip-link = Перейти к содержимому
frame-tagline = один шаг обучения маленького трансформера, операция за операцией
frame-language-switch = Язык
frame-type-size = A+ Крупный шрифт
    .title = Крупнее текст и графики — для проектора
