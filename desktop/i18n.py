"""The windows' language: English (the source strings) or Simplified Chinese, following the
system unless the person chose one in Settings. Translations are Qt `.qm` files built from
`resources/i18n/cairn_<lang>.ts` by `scripts/translations`; English has one too, holding only
the singular and plural forms of the counted strings (`tr("%n memories", "", n)`): "1 memory"."""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QSettings, QTranslator

log = logging.getLogger(__name__)
I18N_DIR = Path(__file__).resolve().parent.parent / "resources" / "i18n"
LANGUAGES = {"en": "English", "zh_CN": "简体中文"}  # each shown in its own language
SYSTEM = "system"
PREF_KEY = "language"


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:  # noqa: N802 - the name lupdate finds
    """Marks `text` for `scripts/translations` (in `context`) where it is declared, to be
    translated where it is shown. Does what Qt's does, typed (Qt's returns `object`)."""
    return text


def chosen(prefs: QSettings) -> str:
    """The person's choice: `system` (the default), `en` or `zh_CN`."""
    value = prefs.value(PREF_KEY, SYSTEM)
    return value if isinstance(value, str) and value in (SYSTEM, *LANGUAGES) else SYSTEM


def resolve(choice: str, system: QLocale | None = None) -> str:
    """The language to show for a choice: the system's when it is one we have, else English."""
    if choice in LANGUAGES:
        return choice
    locale = system or QLocale.system()
    if locale.language() == QLocale.Language.Chinese:
        return "zh_CN"
    return "en"


class Language:
    """Installs (and swaps) the translator of the running application."""

    def __init__(self) -> None:
        self._translators: list[QTranslator] = []
        self.current = "en"

    def apply(self, language: str) -> None:
        """Show `language` from now on; widgets retranslate on their LanguageChange event.
        Qt's own words (a dialog's Cancel and Close) come from Qt's translation, when the Qt
        installation has one (they stayed English)."""
        app = QCoreApplication.instance()
        assert app is not None, "create the QApplication first"
        for old in self._translators:
            app.removeTranslator(old)
        self._translators = []
        translator = QTranslator(app)
        if not translator.load(str(I18N_DIR / f"cairn_{language}.qm")):
            raise FileNotFoundError(f"no translation file for {language} in {I18N_DIR}")
        app.installTranslator(translator)
        self._translators.append(translator)
        if language != "en":
            qt_words = QTranslator(app)
            qt_dir = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
            if qt_words.load(f"qtbase_{language}", qt_dir):
                app.installTranslator(qt_words)
                self._translators.append(qt_words)
            else:
                log.warning("Qt's own translation for %s is not in %s", language, qt_dir)
        self.current = language
