"""The PII table and the over-masking table, shared by the masking tests and every sink's test.

``PII``: (text, the raw values that must not survive masking). ``KEEP``: text that must come
out of masking unchanged (versions, ticket IDs, CVE numbers, documentation addresses …).
"""

PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
    "-----END RSA PRIVATE KEY-----"
)
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)

PII: list[tuple[str, list[str]]] = [
    ("連絡先は taro.yamada@corp.example.co.jp です", ["taro.yamada@corp.example.co.jp"]),
    ("電話 03-1234-5678 まで", ["03-1234-5678"]),
    ("代表は(03)1234-5678です", ["1234-5678"]),
    ("本社 03(1234)5678 へ", ["03(1234)5678"]),
    ("携帯 090-1234-5678", ["090-1234-5678"]),
    ("+81 90 1234 5678 に連絡", ["1234 5678"]),
    ("携帯 09012345678 に連絡", ["09012345678"]),
    ("キーは sk-proj-abcdefghijklmnop1234 です", ["abcdefghijklmnop1234"]),
    ("token ghp_abcdefghijklmnopqrstuvwxyz0123", ["ghp_abcdefghijklmnopqrstuvwxyz0123"]),
    ("AKIAABCDEFGHIJKLMNOP を無効化", ["AKIAABCDEFGHIJKLMNOP"]),
    (
        "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY を漏えい",
        ["wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"],
    ),
    (
        "DefaultEndpointsProtocol=https;AccountName=socwb;AccountKey=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA==;",
        ["Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA=="],
    ),
    ('{"client_secret": "GOCSPX-abcDEF123456", "x": 1}', ["GOCSPX-abcDEF123456"]),
    (
        "GCP のキー AIzaSyA1234567890abcdefghijklmnopqrstuv を削除",
        ["AIzaSyA1234567890abcdefghijklmnopqrstuv"],
    ),
    ("Authorization: Bearer abcdefghijklmnopqrstuvwx", ["abcdefghijklmnopqrstuvwx"]),
    ("認証トークン " + JWT + " を失効", [JWT, "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"]),
    (
        "鍵が漏れた:\n" + PEM + "\n以上",
        ["MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun"],
    ),
    ("password=Hunter2pass", ["Hunter2pass"]),
    ("login pw=abc123 で入った", ["abc123"]),
    ("password: Tr0ub4dor&3", ["Tr0ub4dor&3"]),
    ("パスワード：Secr3t!x", ["Secr3t!x"]),
    ("パスワードは Hunter2! です", ["Hunter2!"]),
    ("the admin password is Winter2026!", ["Winter2026!"]),
    ("送信元 8.8.4.4 から", ["8.8.4.4"]),
    ("攻撃元 2400:cb00:2048:1::c629:d7a2 を遮断", ["2400:cb00:2048:1::c629:d7a2"]),
    ("リンクローカル fe80::1ff:fe23:4567:890a%eth0", ["fe80::1ff:fe23:4567:890a"]),
    ("カード 4111 1111 1111 1111", ["4111 1111 1111 1111"]),
    ("カード番号4111-1111-1111-1111で決済", ["4111-1111-1111-1111"]),
    ("Amex 3782 822463 10005 の利用", ["3782 822463 10005"]),
    ("Diners 30569309025904 の利用", ["30569309025904"]),
    ("東京都千代田区丸の内1-2-3 に所在", ["丸の内1-2-3"]),
    ("担当の田中さんに連絡", ["田中"]),
    ("山田太郎様からの申告", ["山田太郎"]),
    ("鈴木氏が承認", ["鈴木"]),
    ("サトウくんが対応", ["サトウ"]),
    ("Tanaka-san reported it", ["Tanaka"]),
]

KEEP: list[str] = [
    "C2 通信先 203.0.113.45 を遮断する",  # documentation range stays
    "192.0.2.10 と 198.51.100.7",
    "2001:db8::1 は文書用アドレス",
    "社内 10.1.2.3 と 172.16.0.0/12、192.168.10.5、ループバック 127.0.0.1 と ::1",
    "CVE-2024-3400 のパッチを適用",
    "CVE-2021-44228 (Log4Shell)",
    "イベントID 4625 を確認",
    "チケット ID 0123456789 を参照",
    "INC-12345 と REQ-2024-000123",
    "手順 1. から 3. まで 15分以内",
    "2025-04-01 14:30:15 に検知",
    "バージョン 10.2.3 に更新",
    "エージェント v1.2.3.4 を配布",
    "KB5034441 を適用、ビルド 10.0.19045.3930",
    "番号 4111111111111112 は検査用",  # 16 digits that fail the Luhn check
    "シリアル 1234 5678 9012 3456",  # fails Luhn too
    "max_tokens=512, tokenizer=janome",
    "お客様と皆様へのお知らせ、仕様書の様式",
    "氏名欄を確認する",
    "パスワードは 90 日ごとに変更する",
    "password is required",
    "ポート 443 と 8080、MAC 00:1a:2b:3c:4d:5e",
]
