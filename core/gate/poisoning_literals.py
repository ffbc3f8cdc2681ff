"""The literals every match of each poisoning rule holds, worked out ahead (generated).

``poisoning.Rule`` skips its regular expression for a text that holds none of the rule's
required literals. Working them out parses the pattern (``poisoning._required_literals``), and
compiling it costs more: a process that checks one candidate (``commonkeep review --approve``)
paid about 10 ms for the thirteen rules. With the literals here, a rule whose literals are not in
the text is never compiled. A rule whose pattern is not here (changed since) works them out as
before; ``tests/governance/test_poisoning_literals.py`` fails until this file is written again:

    python -m commonkeep.gate.poisoning_literals
"""

from __future__ import annotations

import hashlib
from pathlib import Path

PYTHON = (3, 11)  # the Python that worked them out (its regex parser)


def key(pattern: str, flags: int) -> str:
    return hashlib.blake2b(f"{flags}:{pattern}".encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


# key(pattern, flags) -> the lower-cased literals one of which every match holds (None: not known)
TABLE: dict[str, tuple[str, ...] | None] = {
    '2f60a27a86d1b1df': ('ein', 'eine', 'einem', 'einen', 'einer', 'ich', 'tes', 'thee', 'thou', 'thy', 'toi', 'ton', 'tu', 'tua', 'tuo', 'tuoi', 'u r', 'usted', 'ustedes', 'voce', 'voces', 'vos', 'votre', 'vous', 'ya', 'you', 'your', 'yours', 'yourself', 'yourselves', 'вам', 'вас', 'ваш', 'ваша', 'ваши', 'вы', 'твое', 'твои', 'твой', 'твоя', 'твоё', 'тебе', 'тебя', 'тобои', 'ты', 'あなた', 'お前', '你', '君は', '您', '너는', '너의', '네가', '당신'),
    '3047d124afe61e35': ('anweisung', 'befehl', 'consigne', 'constraint', 'directive', 'directrices', 'directriz', 'diretriz', 'direttiv', 'einschrankung', 'guardrail', 'guidance', 'guideline', 'indicacion', 'indicazion', 'instruc', 'instruccion', 'instructie', 'instruction', 'instruktion', 'istruzion', 'opdracht', 'orden', 'order', 'orienta', 'polic', 'programming', 'prompt', 'regel', 'regla', 'regle', 'regol', 'regra', 'restriccion', 'restriction', 'richtlijn', 'richtlinie', 'rule', 'system message', 'training', 'vorgabe', 'директив', 'инструкци', 'ограничени', 'правил', 'промпт', 'указани', 'установк', 'プロンプト', 'ルール', '制約', '命令', '指令', '指示', '提示', '提示詞', '提示词', '規則', '規定', '规则', '规定', '設定', '设定', '限制', '규칙', '명령', '설정', '제한', '지시', '지침', '프롬프트'),
    '32c7397e1c476ca1': ('<s>', '<|', 'admin', 'assistant', 'developer', 'end_header_id', 'end_of_turn', 'endoftext', 'eot_id', 'human', 'im_end', 'im_start', 'important system', 'inst]', 'instruction', 'message', 'new instruction', 'operator', 'override', 'prompt', 'response', 'start_header_id', 'start_of_turn', 'sys', 'sys>>', 'system', 'system prompt', 'user'),
    '394351ee0c56b31f': ('[tool_calls]', 'action', 'action input', 'antml:', 'function', 'function_call', 'function_result', 'functions.', 'invoke', 'json', 'name', 'observation', 'parameter', 'python_tag', 'thought', 'tool', 'tool_call', 'tool_calls', 'tool_code', 'tool_name', 'tool_result', 'tool_use'),
    '7771ed376ad2f7d2': ('human', 'must never', 'must not', 'need not', 'needn', 'operator', 'owner', 'person', 'should not', 'shouldn', 'user'),
    '7d31276e07643f92': (' comme', ' mode', ' semblant', ' 없는', 'act as ', 'actua como', 'agora voce e', 'ahora eres', 'aja como', 'censorship', 'comportati come', 'desormais', 'do anything now', 'du bist ', 'einschrankungen', 'entwicklermodus', 'filters', 'finge ', 'fingi di', 'finja ', 'from now on', 'grenzen', 'guardrails', 'jailbr', 'limites', 'maintenant', 'modalita sviluppatore', 'mode developpeur', 'modo desarrollador', 'modo desenvolvedor', 'new ', 'ora sei', 'play ', 'pretend ', 'regeln', 'reglas', 'regles', 'regras', 'restricciones', 'restricoes', 'restrictions', 'senza ', 'tu so', 'verhalte dich ', 'without ', 'you', 'you are ', 'веди себя как', 'ограничени', 'правил', 'представь', 'притворись', 'режим разработчика', 'теперь ты', 'ты больше не', 'あなたは今から', 'これからあなたは', 'として振る舞', 'ふりをして', '不受任何限制', '今からあなたは', '从现在开始你', '你现在是', '你現在是', '假装你', '假裝你', '制限', '开发者模式', '從現在開始你', '扮演', '无限制', '没有', '脱獄', '越狱', '越獄', '開発者モード', '開發者模式', '개발자 모드', '역할을 해', '이제부터 ', '지금부터 ', '척해', '탈옥'),
    '8626ff44066c0e16': (' de passe', ' var', '.aws', '.env', 'api', 'apiキー', 'chat', 'chaves', 'chiavi', 'clave', 'cle', 'configuration', 'contrasena', 'conversation', 'cookie', 'credenciais', 'credenciales', 'credential', 'credenziali', 'geheimnis', 'guidelines', 'id_rsa', 'identifiants', 'instructions', 'jeton', 'keychain', 'kubeconfig', 'memory content', 'passphrase', 'password', 'passwort', 'private key', 'prompt', 'rules', 'schlussel', 'secret', 'secretos', 'senha', 'session', 'ssh key', 'system', 'token', 'zugangsdaten', 'ключ', 'парол', 'секрет', 'системн', 'токен', 'учетн', 'システムプロンプト', 'トークン', 'パスワード', '令牌', '凭证', '密码', '密碼', '密钥', '憑證', '秘密', '秘密鍵', '系統提示', '系统提示', '認証情報', '金鑰', '비밀번호', '시스템 프롬프트', '자격', '토큰'),
    '8dbd25c0ec24af1e': ('.', '@', 'discord', 'http', 'ngrok', 'pastebin', 'requestbin', 'telegram', 'webhook', 'www.'),
    '8ead440b597bde4d': (' abstraction', ' compte', ' precedence', 'abandon', 'apply', 'aside', 'befolge ', 'bypass', 'cancel', 'circumvent', 'descart', 'desconsider', 'desobedec', 'dimentic', 'discard', 'disregard', 'er kraft', 'esquec', 'expired', 'follow', 'forget', 'forgot', 'hagas caso', 'haz caso omiso', 'heed', 'hono', 'ignor', 'invalid', 'missacht', 'nao ', 'negeer', 'neglect', 'nicht ', 'no longer ', 'non obbedire', 'non seguire', 'nullif', 'obedezcas', 'obei', 'obey', 'obsolete', 'olvid', 'omit', 'opvolgen', 'oubli', 'outdated', 'overrid', 'overrul', 'pay no ', 'replaced by this', 'rescinded', 'respect', 'revoked', 'scrap', 'sigas', 'supersed', 'superseded', 'throw ', 'trascur', 'ubergeh', 'vergeet', 'vergessen', 'vergeten', 'vergiss', 'void', 'volgen', 'wipe', 'забуд', 'забыть', 'игнор', 'не обращаи', 'не следуи', 'не слушаи', 'отбрось', 'отмени', 'проигнор', '不再遵守', '不要理会', '不要理會', '不要遵守', '作废', '别管', '取代', '従うな', '従わな', '忘れ', '忘掉', '忘記', '忘记', '忽略', '忽視', '无视', '無視', '破棄', '覆盖', '따르지', '무시', '잊어', '잊으'),
    '8f43c96f80cd7966': ('alert', 'avisar', 'behind the', 'between us', 'cht', 'cuentes', 'decir', 'di nascosto', 'digas', 'disclose', 'em segredo', 'emandem', 'en secret', 'en secreto', 'heimlich', 'hidden', 'hide ', 'in segreto', 'inform', 'informes', 'let ', 'menciones', 'mention', 'nao ', 'ne ', 'non ', 'notify', 'ohne ', 'report', 'reveal', 'sans ', 'secret', 'secretly', 'sem contar', 'senza dirlo', 'show', 'tell', 'verschweig', 'warn', 'without ', 'втаине', 'говори', 'никому не', 'рассказываи', 'скрытно', 'сообщаи', 'тайно', 'упоминаи', 'こっそり', '不要告訴', '不要告诉', '不要提及', '伝えないで', '偷偷', '内緒', '別告訴', '别告诉', '悄悄', '知らせないで', '秘密に', '秘密地', '言わないで', '말하지', '몰래', '비밀로', '알리지'),
    'b31c0d6c2ae5576b': ('a user', 'always', 'answer', 'anyone', 'completion', 'exclusively', 'just', 'message', 'must', 'need', 'only', 'output', 'replies', 'reply', 'respond', 'response', 'shall', 'should', 'somebody', 'someone', 'the user', 'upon reading', 'when', 'when asked ', 'will'),
    'bc6ab4cf88538d70': ('base64', 'curl', 'descarga', 'download', 'e execut', 'eval', 'feed', 'fetch', 'grab', 'herunter und fuhr', 'invoke-restmethod', 'invoke-webrequest', 'irm', 'iwr', 'pass', 'pipe', 'powershell', 'python', 'scarica', 'send', 'stream', 'telecharg', 'wget', 'выполни', 'запусти', 'ダウンロードして実行', '下載並', '下载并', '다운로드'),
    'c63062227b3cdf9c': (' precedence', ' priority', ' приоритет', 'alert', 'approved', 'asked you to', 'authori', 'command', 'directive', 'hochste prioritat', 'instruct', 'instruction', 'mandatory ', 'massima priorita', 'maxima prioridad', 'message', 'notice', 'override', 'prioridade maxima', 'priorite absolue', 'priority', 'priority override', 'replace', 'supersede', 'update', 'wants you to', 'максимальн', '最優先', '最高优先级', '最高優先級', '최우선'),
    'd0a3177751967cf9': ('agent', 'ai', 'are to', 'as a', 'assistant', 'attention', 'bot', 'chatgpt', 'claude', 'copilot', 'dear', 'for', 'gemini', 'gpt', 'has to', 'have to', 'hello', 'hey', 'hi', 'is required', 'is to', 'llm', 'may not', 'model', 'must', 'must not', 'need', 'note to', 'reading', 'seeing', 'shall', 'should', 'that reads', 'to', 'will always'),
    'd1627554b79be160': ('above', 'acima', 'all ', 'alle', 'anterieur', 'anterior', 'antes', 'any ', 'arriba', 'bisherig', 'built', 'ci-dessus', 'default', 'deine', 'developer', 'earlier', 'eerdere', 'every', 'existing', 'former', 'fruher', 'hidden', 'ihre', 'initial', 'istema', 'isteme', 'je', 'jouw', 'oben', 'obig', 'old', 'original', 'other', 'plus haut', 'precedent', 'preceding', 'previ', 'previous', 'prior', 'safety', 'sopra', 'sus', 'system', 'tes', 'these', 'those', 'tod', 'tou', 'tue', 'tus', 'tutte', 'tutti', 'vorherig', 'vorige', 'vos', 'we gave you', 'whatever', 'you have been', 'you were', "you've been", 'your', 'ysteem', 'ysteme', 'ystemet', 'zuvor', 'ваш', 'все', 'всех', 'выше', 'предыдущ', 'прежн', 'ранее', 'раньше', 'сво', 'систем', 'тво', 'あなたの', 'これまで', 'すべて', 'システム', '上の', '上記', '上述', '上面', '之前', '以上', '以前', '你的', '先前', '全て', '全部', '前の', '原來', '原来', '所有', '系統', '系统', '기존', '당신의', '모든', '시스템', '앞의', '위의', '이전'),
    'e4c16e38d5715d80': ('affiche', 'carica', 'copy', 'disclose', 'display', 'dump', 'e-mail', 'email', 'envia', 'envie', 'envoie', 'envoyez', 'exfiltrat', 'expose', 'forward', 'gib ', 'imprime', 'invia', 'leak', 'manda', 'mande', 'montre', 'mostra', 'mostre', 'muestra', 'output', 'paste', 'post', 'print', 'publica', 'publie', 'recite', 'repeat', 'reveal', 'revela', 'revele', 'schick', 'send', 'sende', 'share', 'show', 'stampa', 'sube', 'tell me', 'transmets', 'transmit', 'ubermittl', 'upload', 'verrat', 'write out', 'zeig', 'выведи', 'вышли', 'загрузи', 'отправ', 'перешли', 'покажи', 'раскрои', 'скинь', 'アップロード', '上传', '上傳', '出力', '发送', '告訴我', '告诉我', '打印', '教えて', '显示', '泄露', '洩露', '漏ら', '發送', '表示', '転送', '輸出', '轉發', '转发', '输出', '送って', '送信', '顯示', '보내', '보여', '알려', '업로드', '전송', '출력'),
    'ee6ea849620d1e22': ('-rf', 'admin', 'approv', 'approve ', 'authorized_keys', 'bypass', 'chmod', 'circumvent', 'deactivat', 'disable', 'full access', 'owner', 'remove', 'root', 'skip', 'sudo', 'suppress', 'switch off', 'turn', 'write access'),
    'fdb0d193e4d75387': ('comply with', 'context window', 'directive', 'follow', 'guardrail', 'instruction', 'jailbreak', 'obey', 'persona', 'prompt', 'prompt injection', 'system', 'system message'),
}


def compute() -> dict[str, tuple[str, ...] | None]:
    """The table for every rule of ``poisoning`` and ``autoapply``, as the running Python works it out."""
    import importlib

    # by name: this generated table sits beneath the rules it describes (poisoning reads it)
    importlib.import_module("commonkeep.gate.autoapply")  # its rules register on import
    poisoning = importlib.import_module("commonkeep.gate.poisoning")
    RULES, _required_literals = poisoning.RULES, poisoning._required_literals

    out: dict[str, tuple[str, ...] | None] = {}
    for rule in RULES:
        found = _required_literals(rule.pattern, rule.flags)
        out[key(rule.pattern, rule.flags)] = tuple(sorted(found)) if found is not None else None
    return out


def main() -> None:
    import sys

    path = Path(__file__)
    text = path.read_text(encoding="utf-8")
    head, rest = text.split("TABLE: dict[str, tuple[str, ...] | None] = {\n", 1)
    rows = "".join(f"    {k!r}: {v!r},\n" for k, v in sorted(compute().items()))
    path.write_text(head + "TABLE: dict[str, tuple[str, ...] | None] = {\n" + rows + "}\n" + rest.split("}\n", 1)[1],
                    encoding="utf-8")
    print(f"wrote {len(rows.splitlines())} rules' literals to {path} (Python {sys.version_info[0]}.{sys.version_info[1]})")


if __name__ == "__main__":
    main()
