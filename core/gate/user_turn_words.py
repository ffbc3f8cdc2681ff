"""The words of the ``user_turn`` rule (``commonkeep.gate.user_turn``), per language.

Kept small on purpose: the rule stamps only an explicit request to remember, so these tables list
the few ways a person asks for that (English, German, French, Spanish, Portuguese, Russian,
Japanese, Chinese), the few words a request
may start with, and the marks that take a message out of the rule altogether (a retraction,
sarcasm, a hypothetical). A form missing here costs a review, never a wrong stamp.
"""

from __future__ import annotations

import re

_END = r"(?:\s*[:,\u2014\u2013-]|\s+that\b)"  # where a request ends and its clause begins
_DE_END = r"(?:\s*,?\s*dass\b|\s*[:,\u2014\u2013-])"
_FR_END = r"(?:\s+que\b|\s+qu['\u2019]|\s*[:,\u2014\u2013-])"
_ES_END = r"(?:\s+que\b|\s*[:,\u2014\u2013-])"
_PT_END = r"(?:\s+(?:de\s+)?que\b|\s*[:,\u2014\u2013-])"
_RU_END = r"(?:\s*,?\s*что\b|\s*[:,\u2014\u2013-])"
_CJK_END = r"\s*[:,\u3001]"  # after NFKC a full-width colon or comma is ":" / ","

#: An explicit request to remember, as it starts a sentence or a line; the clause follows it.
FORMS = (
    # English
    rf"remember(?:\s+this|\s+for\s+later|\s+for\s+next\s+time|\s+going\s+forward|\s+from\s+now\s+on)?{_END}",
    r"(?:please|pls|kindly)\s+remember(?:\s+that\b)?",
    r"remember(?=\s+(?:we|i|our|my|the|you|your|it|there|this|that)\b)",  # "remember we use pnpm"
    rf"i(?:'d|\s+would)?\s+(?:like|want|need)\s+you\s+to\s+remember{_END}",
    rf"(?:do\s+not|don'?t)\s+forget{_END}",
    rf"keep\s+in\s+mind{_END}",
    rf"memori[sz]e(?:\s+this)?{_END}",
    rf"make\s+a\s+(?:mental\s+)?note{_END}",
    r"note\s+(?:for|to)\s+memory\s*[:,\u2014\u2013-]",
    r"(?:save|add|store|put|commit)\s+(?:this\s+)?(?:to|in|into)\s+(?:your\s+)?memory\s*[:,\u2014\u2013-]",
    # the hosts' own remember command (OMP's extension; typed as a message anywhere)
    r"/commonkeep-remember\b",
    # German
    rf"merke?\s+dir(?:\s+bitte)?{_DE_END}",
    r"merken\s*:",
    rf"notiere?\s+dir{_DE_END}",
    rf"behalte?\s+im\s+kopf{_DE_END}",
    rf"merken\s+sie\s+sich(?:\s+bitte)?{_DE_END}",
    rf"vergiss\s+nicht{_DE_END}",
    rf"vergessen\s+sie\s+nicht{_DE_END}",
    r"notiz\s+f(?:ü|ue)rs\s+ged(?:ä|ae)chtnis\s*[:,\u2014\u2013-]",
    # French
    rf"(?:souviens|rappelle)-toi{_FR_END}",
    rf"(?:souvenez|rappelez)-vous{_FR_END}",
    rf"(?:retiens|retenez|m(?:é|e)morise|m(?:é|e)morisez)(?:\s+bien)?{_FR_END}",
    rf"garde(?:z)?\s+en\s+m(?:é|e)moire{_FR_END}",
    r"(?:à|a)\s+retenir\s*:",
    rf"n['\u2019](?:oublie|oubliez)\s+pas{_FR_END}",
    r"note\s+pour\s+la\s+m(?:é|e)moire\s*[:,\u2014\u2013-]",
    # Spanish
    rf"(?:recuerda|recuerde)(?:\s+bien)?{_ES_END}",
    rf"ten(?:ga)?\s+en\s+cuenta{_ES_END}",
    rf"(?:anota|apunta)(?:\s+esto)?{_ES_END}",
    rf"guarda\s+en\s+(?:la\s+)?memoria{_ES_END}",
    r"acu(?:é|e)rda(?:te|se)\s+de\s+que\b",
    rf"no\s+(?:olvides|olvide){_ES_END}",
    rf"(?:memoriza|memorice){_ES_END}",
    r"nota\s+para\s+la\s+memoria\s*[:,\u2014\u2013-]",
    # Portuguese
    rf"lembr(?:e|a)(?:-(?:se|te))?{_PT_END}",
    rf"n(?:ã|a)o\s+(?:esque(?:ç|c)a|esque(?:ç|c)as){_PT_END}",
    rf"guarde?\s+na\s+mem(?:ó|o)ria{_PT_END}",
    rf"(?:anote|tenha\s+em\s+mente|memorize){_PT_END}",
    # Russian
    rf"запомни(?:те)?{_RU_END}",
    rf"не\s+забудь(?:те)?{_RU_END}",
    rf"имей(?:те)?\s+в\s+виду{_RU_END}",
    # Japanese, Chinese: the request, then a colon (or comma)
    rf"(?:覚えて(?:おいて)?(?:ください)?|記憶して(?:ください)?|メモ){_CJK_END}",
    rf"(?:请)?(?:记住|记下(?:来)?|記住|記下(?:來)?){_CJK_END}",
    # English: a whole message that is "Note: …" (rule 4 reads nothing beside it)
    r"note\s*:",
)

#: Words a request may follow at the start of its sentence ("Ok, and please remember that …").
#: Nothing else: "Sure, remember that …", "Bob: remember that …", "If …, remember that …" are not requests.
FILLERS = (
    r"ok(?:ay)?", r"also", r"and", r"so", r"btw", r"oh\s+and", r"one\s+more\s+thing", r"thanks", r"please",
    r"pls", r"kindly", r"und", r"bitte", r"danke", r"et", r"aussi", r"merci", r"s['\u2019]il\s+(?:te|vous)\s+pla(?:î|i)t",
    r"y", r"tambi(?:é|e)n", r"adem(?:á|a)s", r"gracias", r"por\s+favor", r"obrigad[oa]", r"e",
    r"пожалуйста", r"спасибо", r"и",
)

#: A clause that starts with one of these asks, supposes or sets a condition: never a statement.
NOT_A_STATEMENT = frozenset({
    # a question
    "what", "why", "how", "who", "whom", "whose", "which", "where", "when", "whether", "should", "shall", "can",
    "could", "would", "will", "did", "does", "is", "are", "am", "was", "were", "have", "has", "may", "might",
    "must", "do",  # "do we …" (but "do not …" is an order, see user_turn._clause)
    "to",  # "remember to run the tests": an errand, not a fact
    # a condition or a hypothesis
    "if", "unless", "suppose", "supposing", "assuming", "assume", "imagine", "hypothetically", "whenever", "provided",
    # German, French, Spanish
    "warum", "wie", "wer", "wo", "ob", "soll", "sollen", "sollten", "sollte", "kann", "können", "ist",
    "sind", "wenn", "falls", "angenommen", "pourquoi", "comment", "quoi", "qui", "où", "quand", "est-ce", "si",
    "faut-il", "doit-on", "devrait-on", "supposons", "imaginons", "qué", "que", "por", "cómo", "cuándo", "dónde",
    "quién", "debemos", "deberíamos", "supongamos", "imagina", "cuando", "¿",
})
#: Two words that do the same at a clause's start ("in case …", "what if …", "por qué …").
NOT_A_STATEMENT_PAIRS = frozenset({("in", "case"), ("as", "long"), ("por", "qué"), ("por", "que"), ("et", "si"),
                                   ("qu'est-ce", "que"), ("was", "wäre"), ("en", "caso")})

#: A request followed by one of these at the end of its clause asks for agreement: a question.
TAG_QUESTION = re.compile(
    r",\s*(?:right|correct|no|yes|true|ok(?:ay)?|yeah|eh|innit|isn'?t\s+it|aren'?t\s+we|don'?t\s+we|won'?t\s+we|"
    r"oder|nicht\s+wahr|ne|gell|non|n['\u2019]est-ce\s+pas|hein|verdad|cierto|no\s+es\s+as(?:í|i)|n(?:ã|a)o\s+(?:é|e)|"
    r"да|верно|правда)\s*$"
    r"|(?:吗|嗎|呢|か|かな|でしょう|だろう)\s*[.\u3002]?\s*$", re.I)

_REPORTING = (r"said|says|say|saying|told|tells|wrote|writes|written|posted|posts|replied|replies|claims?|claimed|"
              r"mentioned|mentions|shared|forwarded|sent|asked|asks|quoted|stated|states|suggests?|suggested|"
              r"recommends?|recommended|insists?|insisted|argues?|argued|reckons?|swears?|swore|according\s+to|"
              r"sagt|sagte|schreibt|schrieb|meint|meinte|dit|a\s+dit|(?:é|e)crit|a\s+(?:é|e)crit|dice|dijo|escribe|"
              r"escribi(?:ó|o)|seg(?:ú|u)n|laut|selon")

#: A clause that ends by naming whose words it is ("…, said the vendor"): someone else's claim.
REPORTED_TAIL = re.compile(rf"(?:[,\u2014\u2013]|\s-)\s*(?:\w+\s+){{0,3}}?(?:{_REPORTING}|per)\b", re.I)

#: Anywhere in a message, these take back, mock or suppose what it says: nothing in it is stamped,
#: nor an earlier request when a later message of the person's holds one (``forget that``).
REFUSALS = re.compile(
    r"(?<![\w/])(?:"
    # English: a retraction, sarcasm, a hypothesis
    r"/s|/j|jk|j/k|lol|lmao|rofl|haha\w*|hehe\w*|xd|jaja\w*|mdr|ptdr|kidding|joking|not\s+really|yeah\s+right|as\s+if|sarcas(?:m|tic(?:ally)?)|"
    r"iron(?:y|ic(?:ally)?)|never\s*mind|nvm|scratch\s+that|strike\s+that|cancel\s+that|undo\s+that|belay\s+that|"
    r"disregard|ignore\s+(?:that|this|it|what\s+i\s+said)|i\s+take\s+(?:that|it)\s+back|take\s+(?:that|it)\s+back|"
    r"on\s+second\s+thought|wait,?\s+no|or\s+not|said\s+no\s+one(?:\s+ever)?|eye\s*-?roll|"
    r"(?:that|this|it)(?:'s|\s+is|\s+was)\s+(?:wrong|false|not\s+true|untrue|incorrect|a\s+joke|nonsense|a\s+lie)|"
    r"(?<!n't\s)(?<!not\s)(?<!dont\s)forget\s+(?:that|it|this|what\s+i\s+said|i\s+said)|"
    r"(?:don'?t|do\s+not)\s+(?:remember|memori[sz]e)|(?:don'?t|do\s+not)\s+(?:save|store|note)\s+(?:that|this|it)\b|no\s+need\s+to\s+(?:remember|save|store|note)|"
    r"hypothetic(?:al|ally)|suppose|supposing|imagine|what\s+if|let'?s\s+say|let'?s\s+pretend|pretend|in\s+theory|"
    r"for\s+the\s+sake\s+of\s+argument|role-?play|"
    # German
    r"nur\s+ein\s+scherz|war\s+ein\s+scherz|scherz|vergiss\s+(?:es|das)|ignorier(?:e)?\s+(?:es|das)|nicht\s+merken|"
    r"merk\s+dir\s+das\s+nicht|angenommen|stell\s+dir\s+vor|hypothetisch|was\s+w(?:ä|ae)re\s+wenn|nehmen\s+wir\s+an|"
    # French
    r"je\s+plaisante|je\s+rigole|c['\u2019]est\s+une\s+blague|blague|oublie\s+(?:ça|ca|cela|le)|laisse\s+tomber|"
    r"ne\s+(?:retiens|note|m(?:é|e)morise)\s+pas|pas\s+besoin\s+de\s+(?:retenir|noter|m(?:é|e)moriser)|supposons|"
    r"imaginons|hypoth(?:é|e)tique(?:ment)?|admettons|et\s+si|"
    # Spanish
    r"es\s+broma|era\s+broma|es\s+una\s+broma|broma|olv(?:í|i)dalo|olvida\s+eso|ignora\s+eso|"
    r"no\s+(?:lo\s+)?(?:recuerdes|memorices)|no\s+lo\s+(?:guardes|anotes)|no\s+hace\s+falta\s+(?:recordar|guardar|anotar)|"
    r"supongamos|imagina|imaginemos|hipot(?:é|e)tic(?:o|amente)|qu(?:é|e)\s+pasar(?:í|i)a\s+si|digamos\s+que"
    r")(?![\w])"
    r"|(?<!\w)(?:;-?\)|:-?[pP]|;-?[pP])(?!\w)"  # a wink, a tongue out
    r"|[\U0001F644\U0001F60F\U0001F61C\U0001F92A\U0001F643\U0001F609\U0001F602\U0001F923\U0001F921\U0001F605"
    r"\U0001F914\U0001F937\U0001F92D\U0001F61D\U0001F608]",
    re.I)

#: Anywhere in a message, these say it is about something pasted or someone else's words ("summarise
#: this mail", "the following", "per the vendor"): no request in it is read.
ABOUT_A_PASTE = re.compile(
    r"(?<![\w/])(?:"
    r"summari[sz]e|tl;?dr|translate|proof-?read|the\s+following|below|above|"
    r"this\s+(?:mail|e-?mail|message|page|article|post|log|output|thread|doc(?:ument)?|snippet|text|note|comment|"
    r"paste|excerpt|passage|ticket|issue|diff|quote|transcript|chat|conversation|faq|readme)|"
    r"according\s+to|per\s+the|quoting|quote|citing|source\s*:|they\s+say|as\s+they\s+say|"
    r"zusammenfass\w*|fasse?\s+\w+\s+zusammen|(?:ü|ue)bersetz\w*|folgende\w*|unten|oben|laut\s+|zitat|"
    r"r(?:é|e)sum(?:e|é|ez)|tradui[st]\w*|ci-dessous|ci-dessus|suivant\w*|selon\s+|citation|"
    r"resum(?:e|i|ir)\w*|traduc\w*|a\s+continuaci(?:ó|o)n|abajo|arriba|seg(?:ú|u)n\s+|cita"
    r")(?![\w])", re.I)

#: A sentence that is only one of these takes back the one before it ("Skipping CI is fine. Not.").
TAKEN_BACK = re.compile(r"^(?:not|nope|no|nah|nicht|nein|non|pas|ne)\W*$", re.I)

#: Lines of something pasted: a mail's headers, greeting and sign-off, a log, a chat export, a
#: table, a page's heading or markup, indented code. A message holding one is not read at all.
PASTED_LINE = re.compile(
    r"^(?:"
    r"(?:from|to|cc|bcc|subject|date|sent|reply-to|von|an|betreff|gesendet|de|à|objet|envoyé|para|asunto|enviado)\s*:|"
    r"(?:hi|hello|hey|dear|hallo|liebe[rs]?|sehr\s+geehrte|bonjour|salut|cher|chère|hola|estimad[oa]s?)\b[^.!?\n]{0,60},$|"
    r"dear\s|[\"'`\u201c\u201d\u2018\u2019\u00ab\u00bb\u201e\u201a]|"  # a letter, a line opening with a quotation
    r"(?:best|regards|best\s+regards|kind\s+regards|cheers|sincerely|thanks|thank\s+you|br|mfg|viele\s+gr(?:ü|ue)(?:ß|ss)e|"
    r"gr(?:ü|ue)(?:ß|ss)e|cordialement|bien\s+(?:à|a)\s+vous|saludos|atentamente|un\s+saludo)\s*,$|"
    r"[-_=*]{3,}|sent\s+from\s+my\b|"  # a signature separator, a forwarded mail
    r"\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|\[?\d{1,2}:\d{2}(?::\d{2})?(?:\s*[ap]m)?\]|"  # a log or chat time stamp
    r"(?:info|warn|warning|error|debug|trace|fatal|notice)\b\s*[:\]|-]|"
    r"##\[|::(?:error|warning|notice)|npm\s+err!|error(?:\[\w+\])?:|warning:|(?-i:FAILED|PASSED|ERROR)\b|traceback\b|\$\s|"
    r"\s{4}|\t|"  # indented code or a quoted block
    r"\||.*\|\s*$|(?:[^|\n]*\s\|\s){3}|"  # a table row
    r"#{1,6}\s|<[a-z!/]|\d{1,3}[.)]\s|"  # a page's heading or markup, a numbered list
    r".{1,40}\s{2,}\d{1,2}:\d{2}(?:\s*[ap]m)?\s*$"  # a chat export: "Sam Lee  10:32 AM"
    r")", re.I)

#: A line that gives a speaker's words ("Sam: …", "Vendor FAQ: …") or only a name (a chat export's
#: author line); a request line ("Remember: …") or a filler ("Thanks") has the same shape and is not one.
SPEAKER_LINE = re.compile(r"^[A-Z][\w.'-]{0,20}(?:\s[A-Z][\w.'-]{0,20})?:\s*\S|^[A-Z][a-z]+(?:\s[A-Z][a-z]+)?\s*$")
