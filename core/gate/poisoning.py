"""Poisoning risk of a candidate: text that tries to instruct the agent, and low-trust sources.

A memory that says "ignore previous instructions" or carries a tool call would be replayed into
every future context, so such text is scored ``high`` and never auto-applies; ``medium`` never
auto-applies either (``commonkeep.gate.autoapply``); the reviewer sees the reasons.

The text is scored as a reader sees it (``commonkeep.util.normalize.fold``: look-alike
letters, invisible characters, letters split by dots, entities and base64 undone), then again
with leetspeak undone and as rot13. The rules are families of concepts in ten languages (en, fr,
de, es, it, pt, ru, zh, ja, ko), matched as co-occurrences rather than fixed phrases, so a
paraphrase that keeps the concepts ("set aside whatever guidance you were given before") is
still caught. The spelling tricks themselves are reasons too: a memory has no business hiding
characters, mixing scripts inside a word, carrying an encoded payload or terminal control
characters (raw, or as capture made them visible: ``\x1b[``; an OSC sequence such as a hyperlink
scores ``high``).

Detection is not the whole gate: it cannot know every paraphrase. What earns auto-apply is
decided by the policy (``autoapply``), which holds any text that addresses the agent unless the
host or the writer stamped it. Rules: trust class risk (``contracts/ompkeep-store.md`` §6.1),
non-durable signals raise to at least ``medium`` (§6.2), plus the text cues below. Reasons are
short codes.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

# the rules' machinery (``Rule``: a pattern with its literal prefilter) lives in ``literal_rule``;
# its names keep importing from here
from commonkeep.gate.fold_views import _ROT13_HINTS as _ROT13_HINTS
from commonkeep.gate.fold_views import _fold_keeps as _fold_keeps
from commonkeep.gate.fold_views import _fold_leaves as _fold_leaves
from commonkeep.gate.fold_views import _rot13_hint as _rot13_hint
from commonkeep.gate.fold_views import _rot13_view as _rot13_view
from commonkeep.gate.literal_rule import _ASKS_BEFORE_NEEDLES as _ASKS_BEFORE_NEEDLES
from commonkeep.gate.literal_rule import RULES as RULES
from commonkeep.gate.literal_rule import Rule as Rule
from commonkeep.gate.literal_rule import alternatives as alternatives
from commonkeep.gate.prefilter import possible
from commonkeep.gate.trust import NON_DURABLE, TRUST_CLASSES, Risk, max_risk
from commonkeep.util.normalize import _LEET, fold, plain


def _rx(*parts: str) -> Rule:
    return Rule("|".join(parts))


# --- concepts, folded spelling (accents dropped: "règles" is matched as "regles") ----------------
_OVERRIDE = _rx(
    r"\b(?:ignor\w*|disregard\w*|forget\w*|forgot|overrid\w*|overrul\w*|bypass\w*|circumvent\w*|discard\w*|abandon\w*|neglect\w*|nullif\w*)",
    r"\bset (?:\w+ )?aside\b|\bpay no (?:attention|heed)\b|\b(?:no longer|stop|don'?t|do not|never) (?:follow|obey|heed|respect|honou?r|apply)\w*",
    r"\bthrow (?:\w+ )?(?:out|away)\b|\bscrap\b|\bwipe\b|\bcancel\w*|\bsupersed\w*|\btakes? precedence\b|\bno longer (?:valid|apply|applies|in (?:force|effect))\b",
    r"\b(?:obsolete|outdated|void|invalid|revoked|rescinded|expired|superseded|replaced by this)\b",  # declared void
    r"\bnegeer\w*|\bvergeet\b|\bvergeten\b|\bniet (?:meer )?(?:volgen|opvolgen)\b",  # nl
    r"\boubli\w*|\bne (?:tiens|tenez|tenir) (?:pas|plus) compte\b|\bfai(?:s|tes) abstraction\b|\bn'?obei\w* (?:pas|plus)\b",  # fr
    r"\bvergiss\w*|\bvergessen\b|\bmissacht\w*|\bubergeh\w*|\bau(?:ss|ß)er kraft\b|\bnicht (?:mehr )?befolg\w*|\bbefolge \w+ nicht\b",  # de
    r"\bolvid\w*|\bomit\w*|\bhaz caso omiso\b|\bno (?:sigas|obedezcas|hagas caso)\b|\bdescart\w*|\bdesobedec\w*",  # es
    r"\bdimentic\w*|\btrascur\w*|\bnon seguire\b|\bnon obbedire\b",  # it
    r"\besquec\w*|\bdesconsider\w*|\bnao (?:siga|obedeca)\b",  # pt
    r"игнор\w*|проигнор\w*|забуд\w*|забыть|не обращаи\w*|отбрось|не следуи|не слушаи|отмени\w*",  # ru (й folded to и)
    r"忽略|无视|無視|忽視|忘记|忘記|忘掉|不要理会|不要理會|不要遵守|不再遵守|别管|取代|覆盖|作废",  # zh
    r"無視|忘れ|従わな|従うな|破棄",  # ja
    r"무시|잊어|잊으|따르지 ?마|따르지 ?말",  # ko
)
_INSTRUCTIONS = _rx(
    r"\b(?:instruction|prompt|rule|guideline|guidance|directive|order|constraint|guardrail|restriction|polic(?:y|ie)|programming|system message|training)s?\b",
    r"\b(?:instruction|consigne|regle|directive)s?\b",  # fr
    r"\b(?:anweisung|regel|vorgabe|instruktion|richtlinie|befehl|einschrankung)\w*",  # de
    r"\b(?:instruccion|regla|indicacion|directriz|directrices|orden|restriccion)\w*",  # es
    r"\b(?:istruzion|regol|indicazion|direttiv)\w*",  # it
    r"\b(?:instruc|regra|diretriz|orienta)\w*",  # pt
    r"\b(?:instructie|regel|richtlijn|opdracht)\w*",  # nl
    r"инструкци\w*|правил\w*|указани\w*|директив\w*|ограничени\w*|промпт\w*|установк\w*",  # ru
    r"指令|指示|规则|規則|提示词|提示詞|提示|设定|設定|限制|规定|規定",  # zh
    r"指示|命令|ルール|プロンプト|制約|設定",  # ja
    r"지시|명령|규칙|프롬프트|지침|제한|설정",  # ko
)
_PRIOR = _rx(
    r"\b(?:previous|prior|above|earlier|preceding|original|initial|former|old|existing|hidden|system|safety|developer|built-?in|default)\b",
    r"\b(?:your|all (?:of )?(?:the |your )?|any (?:of )?(?:the |your )?|every|whatever|other|those|these)\b",
    r"\b(?:precedent\w*|anterieur\w*|tou(?:te)?s (?:les|vos|tes)|vos|tes|ci-dessus|plus haut)\b",  # fr
    r"\b(?:vorherig\w*|bisherig\w*|obig\w*|alle|deine\w*|ihre\w*|fruher\w*|oben|zuvor)\b",  # de
    r"\b(?:anterior\w*|previ[ao]s|tod[ao]s|tus|sus|arriba|acima|antes)\b",  # es / pt
    r"\b(?:precedent\w*|tutte|tutti|tue|sopra)\b",  # it
    r"\b(?:systeme|sisteme|sistema|systeem|systemet)\b|\bsystem\w*",  # the system, in fr / es / it / pt / nl / de
    r"\b(?:you were|you've been|you have been|we gave you) (?:given|configured|told|trained|set up|instructed)\b",
    r"\b(?:vorige|eerdere|alle|je|jouw)\b",  # nl
    r"предыдущ\w*|прежн\w*|все\b|всех\b|сво\w*|тво\w*|ваш\w*|систем\w*|выше|ранее|раньше",  # ru
    r"之前|以前|先前|上面|上述|以上|所有|全部|原来|原來|系统|系統|你的",  # zh
    r"以前|前の|これまで|すべて|全て|システム|あなたの|上記|上の",  # ja
    r"이전|앞의|모든|기존|시스템|당신의|위의",  # ko
)
_IDENTITY = _rx(
    r"\byou(?:'re| are| will (?:now )?be) (?:now|no longer)\b|\byou are (?:a |an )?(?:free|unrestricted|unfiltered|jailbroken|evil|dan)\b",
    r"\bfrom now on,? you\b|\bpretend (?:to be|you(?:'re| are)|that you)\b|\brole-?play (?:as|that)\b|\bnew (?:persona|identity|role)\b",
    r"\bact as (?:a |an |the )?(?:system|admin\w*|root|developer|unrestricted|unfiltered|different|new|evil)\b",
    r"\b(?:developer|god|dan|debug|admin|maintenance|unrestricted|jailbreak) mode\b|\bjailbr[eo]\w*|\bdo anything now\b",
    r"\bwithout (?:any )?(?:restrictions|limits|filters|guardrails|censorship|rules)\b|\bno (?:restrictions|filters|guardrails|censorship)\b",
    r"\bsans (?:aucune )?(?:regles|restrictions|limites)\b|\bohne (?:jede )?(?:regeln|einschrankungen|grenzen)\b|\bsin (?:ninguna )?(?:reglas|restricciones|limites)\b",
    r"\bsenza (?:alcuna )?(?:regole|restrizioni|limiti)\b|\bsem (?:nenhuma )?(?:regras|restricoes|limites)\b|без (?:каких-либо )?(?:правил|ограничени)\w*",
    r"没有(?:任何)?限制|不受任何限制|无限制|制限(?:なし|のない|がない)|제한(?:이)? 없는",
    r"\b(?:tu es|vous etes) (?:maintenant|desormais)\b|\b(?:fais|faites) semblant\b|\b(?:agis|agissez|comporte-toi) comme\b|\bmode developpeur\b",  # fr
    r"\bdu bist (?:jetzt|nun|ab sofort)\b|\btu so,? als\b|\bverhalte dich (?:wie|als)\b|\bentwicklermodus\b",  # de
    r"\bahora eres\b|\bfinge (?:ser|que)\b|\bactua como\b|\bmodo desarrollador\b",  # es
    r"\bora sei\b|\bfingi di\b|\bcomportati come\b|\bmodalita sviluppatore\b",  # it
    r"\bagora voce e\b|\bfinja (?:ser|que)\b|\baja como\b|\bmodo desenvolvedor\b",  # pt
    r"теперь ты\b|притворись|веди себя как|представь,? что ты|режим разработчика|ты больше не",  # ru
    r"你现在是|你現在是|从现在开始你|從現在開始你|假装你|假裝你|扮演|开发者模式|開發者模式|越狱|越獄",  # zh
    r"あなたは今から|今からあなたは|これからあなたは|ふりをして|として振る舞|開発者モード|脱獄",  # ja
    r"이제부터 (?:너|당신)|지금부터 (?:너|당신)|척해|역할을 해|개발자 모드|탈옥",  # ko
)
_SECRECY = _rx(
    r"\b(?:do not|don'?t|never) (?:tell|inform|notify|alert|warn|let (?:\w+ )?know)\b|\bwithout (?:tell|inform|notify|alert|warn|ask)ing\b",
    r"\b(?:do not|don'?t|never) (?:mention|reveal|disclose|report|show) (?:this|it|that|any of this|anything)? ?(?:to|with) (?:the )?(?:user|human|anyone|them|people|owner|team)\b",
    r"\bkeep (?:this|it) (?:a )?(?:secret|hidden|between us)\b|\bhide (?:this|it) from\b|\bsecretly\b|\bbehind (?:the user'?s|their) back\b",
    r"\bne (?:le |lui |leur )?(?:dis|dites|mentionne\w*|signale\w*) (?:pas|rien|jamais)\b|\bsans (?:le )?(?:dire|prevenir|informer)\b|\ben secret\b",  # fr
    r"\b(?:sag|sage|erzahl|verrat)\w* (?:es |das |ihm |ihr )?(?:nicht|niemandem)\b|\bheimlich\b|\bohne (?:es |dem \w+ )?zu (?:sagen|erwahnen)\b|\bverschweig\w*",  # de
    r"\bno (?:le |les )?(?:digas|menciones|cuentes|informes)\b|\ben secreto\b|\bsin (?:decir|avisar)\w*",  # es
    r"\bnon (?:dire|dirlo|menzionare|informare)\b|\bdi nascosto\b|\bin segreto\b|\bsenza dirlo\b",  # it / pt below
    r"\bnao (?:diga|conte|mencione|informe)\b|\bem segredo\b|\bsem contar\b",
    r"не (?:говори|сообщаи|рассказываи|упоминаи)\w*|втаине|скрытно|тайно|никому не",  # ru
    r"不要告诉|不要告訴|别告诉|別告訴|不要提及|秘密地|偷偷|悄悄",  # zh
    r"言わないで|伝えないで|知らせないで|内緒|こっそり|秘密に",  # ja
    r"말하지 ?마|알리지 ?마|몰래|비밀로",  # ko
)
_REVEAL = _rx(
    r"\b(?:reveal|print|show|leak|output|repeat|dump|display|disclose|expose|recite|tell me|write out|paste|share|send|post|upload|forward|email|e-mail|transmit|exfiltrat\w*|copy)\b",
    r"\b(?:revele|affiche|montre|envoie|envoyez|transmets|publie|gib (?:\w+ )?aus|zeig\w*|sende|schick\w*|verrat\w*|ubermittl\w*)\b",
    r"\b(?:revela|muestra|imprime|envia|manda|sube|publica|mostra|stampa|invia|carica|mostre|envie|mande)\b",
    r"покажи|выведи|раскрои|отправ\w*|перешли|вышли|загрузи|скинь",
    r"显示|顯示|打印|输出|輸出|泄露|洩露|发送|發送|上传|上傳|转发|轉發|告诉我|告訴我",
    r"表示|出力|教えて|送信|送って|アップロード|転送|漏ら",
    r"보여|출력|알려|보내|전송|업로드",
)
_SENSITIVE = _rx(
    r"\bsystem ?prompt\b|\b(?:your|hidden|initial|original|secret|internal) (?:instructions|prompt|rules|configuration|guidelines)\b",
    r"\b(?:api[ _-]?keys?|credentials?|secrets?|passwords?|passphrases?|tokens?|private keys?|ssh keys?|id_rsa|\.env\b|env(?:ironment)? var\w*|cookies?|\.aws|kubeconfig|keychain)",
    r"\b(?:conversation|chat|session) (?:history|log|transcript)s?\b|\b(?:the |this )?(?:whole |entire )?(?:conversation|memory contents?)\b",
    r"\b(?:mots? de passe|cles?(?: api)?|identifiants|jetons?)\b|\b(?:passwort\w*|schlussel\w*|zugangsdaten|geheimnis\w*)\b",
    r"\b(?:contrasenas?|claves?|credenciales|secretos|chiavi|credenziali|senhas?|chaves|credenciais)\b",
    r"парол\w*|ключ\w*|токен\w*|учетн\w* данн\w*|секрет\w*|системн\w* промпт",
    r"密码|密碼|密钥|金鑰|凭证|憑證|令牌|系统提示|系統提示|秘密",
    r"パスワード|秘密鍵|認証情報|トークン|システムプロンプト|APIキー",
    r"비밀번호|토큰|자격 ?증명|시스템 프롬프트|API ?키",
)
_DESTINATION = _rx(r"https?://|\bwww\.|[\w.+-]+@[\w-]+\.[a-z]{2,}|\bwebhook|\bpastebin|\bngrok|\brequestbin|\b(?:discord|telegram)\b|\b\d{1,3}(?:\.\d{1,3}){3}\b")
_NEGATED = re.compile(r"\b(?:never|not|don'?t|no|avoid|without|nie|jamais|nunca|mai|никогда|не)\W+(?:\w+\W+){0,2}$", re.I)
_REMOTE_EXEC = _rx(
    r"\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|fetch)\b[^\n]{0,160}\|\s*(?:sudo\s+)?(?:ba|z|da|k|fi)?sh\b",
    r"\b(?:curl|wget|iwr|irm|invoke-webrequest)\b[^\n]{0,160}\|\s*(?:sudo\s+)?(?:python\d?|perl|ruby|node|iex|invoke-expression|powershell|pwsh)\b",
    r"\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)|\$\(\s*(?:curl|wget)\b|\beval\b[^\n]{0,20}(?:curl|wget)|base64\s+(?:-d|--decode)[^\n]{0,40}\|\s*(?:ba|z)?sh\b",
    r"\bpowershell\b[^\n]{0,30}\s-(?:e|enc|encodedcommand)\b|\bpython\d?\s+-c\s+[^\n]{0,40}(?:urllib|requests|socket)",
    r"\b(?:pipe|feed|pass|stream|send)\b[^\n]{0,60}\b(?:url|link|script|download|output of curl|address|endpoint)\b[^\n]{0,60}\b(?:into|to|through|in)\b[^\n]{0,10}\b(?:bash|sh|zsh|shell|terminal|python|powershell)\b",
    r"\b(?:download|fetch|grab)\w* (?:\S+ ){0,6}(?:and |then |and then |, then )+(?:run|execut\w*|source|eval|launch|start)\w*",
    r"\btelecharg\w* (?:\S+ ){0,6}et (?:l'?)?execut\w*|\blade (?:\S+ ){0,6}herunter und fuhr\w* (?:\S+ ){0,3}aus|\bdescarga\w* (?:\S+ ){0,6}y ejecut\w*",
    r"\bscarica\w* (?:\S+ ){0,6}e esegu\w*|\bbaix\w* (?:\S+ ){0,6}e execut\w*|скачаи\w* (?:\S+ ){0,6}и (?:запусти|выполни)\w*",
    r"下载并(?:运行|执行)|下載並(?:執行|運行)|ダウンロードして実行|다운로드(?:하고|해서) 실행",
)
_DISABLE = _rx(
    r"\b(?:disable|turn(?:ing)? off|switch off|deactivat\w*|bypass\w*|circumvent\w*|suppress\w*|remove|skip)\b[^.\n]{0,40}\b(?:safety|guardrails?|content filters?|moderation|sandbox\w*|approvals?|confirmations?|security (?:checks?|scan\w*|review\w*)|signature (?:checks?|verification)|2fa|mfa|antivirus|audit log\w*|the gate|commonkeep review)\b",
    r"\b(?:grant|give)\b[^.\n]{0,30}\b(?:admin\w*|root|sudo|owner|full access|write access)\b|\bauthorized_keys\b|\brm\s+-rf\s+(?:/|~|\$HOME)(?:\s|$)|\bchmod\s+(?:-R\s+)?777\b",
    r"\bauto-?approv\w* (?:all|every|any)\b|\bapprove (?:all|every|any) (?:tool|command|request)",
)
_AUTHORITY = _rx(
    r"\b(?:this|these|the following) (?:instruction|rule|message|memory|note|directive)s? (?:overrides?|supersedes?|takes? precedence|ha(?:s|ve) (?:the )?(?:highest )?priority|replaces?)\b",
    r"\b(?:highest|top|maximum|absolute) priority\b|\bpriority override\b|\bmandatory (?:directive|instruction)\b",
    r"\b(?:system|admin|administrator|security|developer|operator|root) (?:override|notice|message|update|alert|directive|instruction|command)\b",
    r"\bthe (?:user|developer|admin|owner|operator|anthropic|openai) (?:has )?(?:authori[sz]ed|approved|wants you to|asked you to|instructs? you)\b",
    r"\bpriorite absolue\b|\bhochste prioritat\b|\bmaxima prioridad\b|\bmassima priorita\b|\bprioridade maxima\b|наивысш\w* приоритет|максимальн\w* приоритет|最高优先级|最高優先級|最優先|최우선",
)
_TOOL_CALL = Rule(
    r"</?(?:tool_call|tool_use|tool_result|function_calls?|function_results?|invoke|antml:[a-z_]+|parameter|tool|function)\b"
    r"|\"(?:tool_calls|function_call|tool_use|tool_name)\"\s*:"
    r"|\{\s*[\"'](?:name|tool|function|action)[\"']\s*:\s*[\"'][\w.-]+[\"']\s*,\s*[\"'](?:arguments|parameters|input|args|action_input)[\"']\s*:"
    r"|```(?:tool|tool_code|tool_call|function|json\s*\{\s*\"(?:tool|name|function)\")\b"
    r"|(?:^|\n)\s*Action\s*:\s*[\w.-]+\s*\n\s*Action Input\s*:|(?:^|\n)\s*(?:Thought|Observation)\s*:[^\n]*\n\s*Action\s*:"
    r"|\bfunctions\.[a-z_]\w*\s*\(|\b(?:call|invoke|use) (?:the )?tool\b[^.\n]{0,30}\(|\[TOOL_CALLS\]|<\|(?:python_tag|tool|function)[^|]*\|>",
    re.I,
)
_ROLE_MARKER = Rule(
    r"(?:^|\n)\s*(?:#+\s*)?(?:system|assistant|user|human|developer|admin|operator)\s*(?:prompt|message|note|instructions?)?\s*:\s"
    r"|<\|[a-z_]+\|>|<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id)"
    r"|\[/?INST\]|<</?SYS>>|<s>\s*\[|</?(?:start_of_turn|end_of_turn|system|sys|assistant|user|instructions?)>"
    r"|(?:^|\n)\s*#{1,6}\s*(?:\W\s*)?(?:system|assistant|instruction|admin|developer|override|important system|new instructions?|system prompt)s?\b"
    r"|(?:^|\n)\s*\**\s*[\[({<]?(?:system|admin|developer|operator)(?: prompt| note| message| notice| override)?[\])}>]?\s*\**\s*[:\]\-—]"
    r"|(?:^|\n)\s*[\[({<]\s*(?:system|admin|developer|operator|assistant)(?: prompt| note| message| notice| override)?\s*[\])}>]"
    r"|\b(?:BEGIN|END) (?:SYSTEM|ADMIN|DEVELOPER) (?:PROMPT|MESSAGE|INSTRUCTIONS?)\b|(?:^|\n)\s*###\s*(?:Instruction|Response)\s*:?",
    re.I,
)
_HIDDEN_MARKUP = re.compile(r"<!--|-->|\[//\]:\s*#|\[comment\]:\s*#|<\s*(?:span|div|p)[^>]*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0)", re.I)
_MD_IMAGE_EXFIL = re.compile(r"!\[[^\]]*\]\(\s*https?://[^)\s]*[?&][\w-]+=[^)\s]*(?:\{|%7B|\$|<)", re.I)
# terminal controls: raw (C0 but newline and tab, DEL, C1) or as capture made them visible (\x1b, \u001b, \033, \e)
_RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_ESCAPED_CONTROL = re.compile(r"\\(?:x(?:0[0-8bcef]|1[0-9a-f]|7f|[89][0-9a-f])|u00(?:0[0-8bcef]|1[0-9a-f]|7f|[89][0-9a-f])|033|e\[)", re.I)
_OSC = re.compile(r"(?:\x1b|\x9d|\\x1b|\\u001b|\\033|\\e)\]|\\x9d|\\u009d", re.I)
_MIXED_WORD = re.compile(r"\b(?=\w*[A-Za-z])(?=\w*[\u0370-\u03ff\u0400-\u04ff\u0500-\u052f\u13a0-\u13ff])\w+\b")
_EMOJI_JOIN = frozenset({0x200D, 0xFE0F, 0xFE0E})

LOW_TRUST_SOURCE_TYPES = frozenset({"web", "url", "generated", "generated_content", "tool_result", "repository_text", "external_document"})


@dataclass
class PoisoningAssessment:
    """``poisoning_risk`` and ``poisoning_risk_reasons`` of a candidate."""

    risk: Risk
    reasons: list[str] = field(default_factory=list)


def _hidden_characters(text: str) -> bool:
    if text.isascii():
        return False
    for i, ch in enumerate(text):
        cp = ord(ch)
        if cp in _EMOJI_JOIN:  # joiners and variation selectors inside an emoji sequence are not hidden text
            near = text[i - 1: i + 2]
            if any(unicodedata.category(c) == "So" for c in near):
                continue
        if unicodedata.category(ch) == "Cf" or 0xFE00 <= cp <= 0xFE0F or 0xE0000 <= cp <= 0xE01EF:
            return True
    return False


def _styled_letters(text: str) -> bool:
    """Full-width, mathematical or enclosed letters: what NFKC changes, ligatures and accents aside."""
    if text.isascii():
        return False
    for ch in text:
        if ch.isascii() or not ch.isalnum():
            continue
        folded = unicodedata.normalize("NFKC", ch)
        if folded != ch and folded.isascii() and len(folded) == 1:
            return True
    return False


# the bits (``prefilter``) of the rules one of which ``_concepts`` needs to match before it reports
# anything, ``_MD_IMAGE_EXFIL`` aside; known once each of them knows its literals
_ENTRY_BITS: list[int] = []


def _concept_possible(t: str) -> bool:
    """False only when none of those rules can match ``t``: each knows its literals, and ``t`` holds
    none of them (one pass of ``prefilter``, which each rule's ``search`` would ask in turn)."""
    if not _ENTRY_BITS:
        rules = (_OVERRIDE, _IDENTITY, _SECRECY, _AUTHORITY, _REVEAL, _REMOTE_EXEC, _DISABLE, _TOOL_CALL, _ROLE_MARKER)
        if not all(r._filtered for r in rules):  # a rule whose literals are not known yet may match anything
            return True
        _ENTRY_BITS.append(sum(1 << r._bit for r in rules))
    return bool(possible(t) & _ENTRY_BITS[0])


def _unnegated(rx: Rule, text: str) -> bool:
    """``rx`` matches somewhere not right after a negation ("never print secrets" is a rule, not a leak)."""
    return any(not _NEGATED.search(text[max(0, m.start() - 30): m.start()]) for m in rx.finditer(text))


def _concepts(t: str) -> list[tuple[str, Risk]]:
    if not _concept_possible(t):  # no rule below can match: only the plain expression is left
        return [("exfiltration_like", "high")] if _MD_IMAGE_EXFIL.search(t) else []
    found: list[tuple[str, Risk]] = []
    if _OVERRIDE.search(t) and _INSTRUCTIONS.search(t) and _PRIOR.search(t):
        found.append(("instruction_like_text", "high"))
    if _IDENTITY.search(t):
        found.append(("identity_change", "high"))
    if _SECRECY.search(t):
        found.append(("secrecy", "high"))
    if _AUTHORITY.search(t):
        found.append(("authority_claim", "high"))
    if _unnegated(_REVEAL, t) and _SENSITIVE.search(t):
        found.append(("exfiltration_like", "high" if _DESTINATION.search(t) or re.search(r"system ?prompt|instructions|系统提示|システムプロンプト", t, re.I) else "medium"))
    if _REMOTE_EXEC.search(t):
        found.append(("remote_execution", "medium"))
    if _DISABLE.search(t):
        found.append(("disables_safeguards", "medium"))
    if _TOOL_CALL.search(t):
        found.append(("tool_call_lookalike", "high"))
    if _ROLE_MARKER.search(t):
        found.append(("role_marker", "high"))
    if _MD_IMAGE_EXFIL.search(t):
        found.append(("exfiltration_like", "high"))
    return found


def assess_text(text: str) -> PoisoningAssessment:
    """Risk from the wording alone (as written, folded, with leetspeak undone, and as rot13)."""
    risk, reasons = _assess(text) if len(text) <= 8192 else _assess.__wrapped__(text)
    return PoisoningAssessment(risk, list(reasons))


@lru_cache(maxsize=4096)  # one text is scored at capture, at curation and again at apply
def _assess(text: str) -> tuple[Risk, tuple[str, ...]]:
    reasons: list[str] = []
    risk: Risk = "low"

    def add(code: str, level: str) -> None:
        nonlocal risk
        if code not in reasons:
            reasons.append(code)
        risk = max_risk(risk, level)

    # most plain ASCII text: fold would return it as it is
    keeps = _fold_keeps(text)
    leaves = keeps or _fold_leaves(text)
    folded = text if leaves else fold(text)
    if _RAW_CONTROL.search(text) or _ESCAPED_CONTROL.search(text):  # a memory has no business steering a terminal
        add("terminal_control_characters", "high" if _OSC.search(text) else "medium")
    if _hidden_characters(text):
        add("hidden_characters", "high")
    if _HIDDEN_MARKUP.search(folded):
        add("hidden_markup", "high")
    if not text.isascii() and _MIXED_WORD.search(unicodedata.normalize("NFKC", text)):
        add("confusable_letters", "high")
    if _styled_letters(text):
        add("styled_letters", "medium")
    if _decoded(text, folded):
        add("encoded_or_split_text", "medium")
    for code, level in _concepts(folded):
        add(code, level)
    leet = unleet(folded)
    if leet != folded:
        for code, level in _concepts(leet):
            add(code, level)
            add("leetspeak", "medium")
    flipped = _rot13_view(folded, keeps, leaves)
    for code, level in _concepts(flipped) if flipped != folded and _rot13_hint(flipped) else []:
        if level == "high" and code not in reasons and code not in ("role_marker", "tool_call_lookalike"):
            add(code, level)
            add("rot13", "high")
    return risk, tuple(reasons)


# ``normalize.unleet``'s words, looked for at the start of a run of word characters only: its expression
# tries its two lookaheads at every position, but a match can only start where a run starts (from
# anywhere inside a run, the rest holds a letter and a digit only if the whole run does, and a match
# ends at the run's end), so the answer is the same at half the cost
_LEET_RUN = re.compile(r"(?<![\w@$!|])(?=[\w@$!|]*[A-Za-z])(?=[\w@$!|]*[0-9@$!|])[\w@$!|]{3,}")


def unleet(text: str) -> str:
    """``normalize.unleet``: leetspeak undone in words mixing letters with digits or ``@$!|``."""
    return _LEET_RUN.sub(lambda m: m.group(0).translate(_LEET), text)


def _decoded(raw: str, folded: str) -> bool:
    """Did folding do more than NFKC, dropping accents and invisible characters (decode, join split letters)?"""
    if folded == raw and raw.isascii():  # folding changed nothing (plain ASCII stays as it is): nothing decoded
        return False
    light = plain(raw)
    squash = re.compile(r"[\W_]+")
    return squash.sub("", folded).lower() != squash.sub("", light).lower() or _words(folded) < _words(light)


def _words(text: str) -> int:
    return len(re.findall(r"\w+", text))


def assess_candidate(cand: dict[str, Any]) -> PoisoningAssessment:
    """Risk of a candidate from its text, trust class, durability and source type."""
    found = assess_text(str(cand.get("text", "")))
    risk, reasons = found.risk, list(found.reasons)
    tc_name = cand.get("primary_trust_class")
    tc = TRUST_CLASSES.get(tc_name or "")
    if tc is not None and tc.risk != "low":
        reasons.append(f"low_trust_class:{tc_name}")
        risk = max_risk(risk, tc.risk)
    if cand.get("durability_signal") in NON_DURABLE:
        reasons.append(f"non_durable:{cand['durability_signal']}")
        risk = max_risk(risk, "medium")
    source = cand.get("source") or {}
    if isinstance(source, dict) and source.get("type") in LOW_TRUST_SOURCE_TYPES:
        reasons.append(f"low_trust_source:{source['type']}")
        risk = max_risk(risk, "medium")
    stored = cand.get("poisoning_risk")
    if isinstance(stored, str) and stored in ("low", "medium", "high"):
        risk = max_risk(risk, stored)
        for r in cand.get("poisoning_risk_reasons") or []:
            if r not in reasons:
                reasons.append(str(r))
    return PoisoningAssessment(risk, reasons)
