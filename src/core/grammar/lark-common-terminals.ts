/*
 * The terminals of Lark's bundled `common` library that `%import common.NAME` can reach (Codex's
 * apply_patch grammar imports `LF`), written in the subset our parser reads. ESCAPED_STRING is
 * stated as the language Lark's lexer actually accepts, because Lark's own definition uses a
 * lookbehind, which a regular matcher cannot express.
 */
export const LARK_COMMON_TERMINALS = String.raw`
DIGIT: "0".."9"
HEXDIGIT: "a".."f" | "A".."F" | DIGIT
INT: DIGIT+
SIGNED_INT: ["+" | "-"] INT
DECIMAL: INT "." INT? | "." INT
_EXP: ("e" | "E") SIGNED_INT
FLOAT: INT _EXP | DECIMAL _EXP?
SIGNED_FLOAT: ["+" | "-"] FLOAT
NUMBER: FLOAT | INT
SIGNED_NUMBER: ["+" | "-"] NUMBER
ESCAPED_STRING: /"(?:[^"\\\n]|\\[^\n])*"/
LCASE_LETTER: "a".."z"
UCASE_LETTER: "A".."Z"
LETTER: UCASE_LETTER | LCASE_LETTER
WORD: LETTER+
CNAME: ("_" | LETTER) ("_" | LETTER | DIGIT)*
WS_INLINE: (" " | /\t/)+
WS: /[ \t\f\r\n]/+
CR: /\r/
LF: /\n/
NEWLINE: (CR? LF)+
SH_COMMENT: /#[^\n]*/
CPP_COMMENT: /\/\/[^\n]*/
C_COMMENT: "/*" /(?:[^*]|\*+[^*\/])*\*+/ "/"
SQL_COMMENT: /--[^\n]*/
`;
