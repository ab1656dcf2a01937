<?php
// echo.php: the test origin's programmable page. Query parameters choose the
// response, the body reports what the request looked like, so end-to-end tests
// can produce every header combination and check what reached the origin.
//
//   h[]=Name:+value  add a response header (repeatable; same name appends)
//   status=N         response status code
//   size=N           pad the body to exactly N bytes
//   sleep_ms=N       wait N ms before answering
//   setcookie=1      send Set-Cookie: sess=<id>
//   body=TEXT        echoed as "body: TEXT"
//   ctype=TYPE       Content-Type (default text/plain; charset=utf-8)
//   chunked=1        no Content-Length (nginx answers chunked)
//   mark=NAME        create file NAME in $RAMJET_MARK_DIR on arrival
//
// Body: "key: value" lines, a blank line, then padding. Keys: id (unique per
// response), method, uri, remote-addr (the client as the web server saw it),
// reqbody-len, reqbody-sha256, body, hdr.<Name> for every request header.

$id = bin2hex(random_bytes(8)) . '-' . hrtime(true);

if (isset($_GET['mark']) && isset($_SERVER['RAMJET_MARK_DIR'])) {
    touch($_SERVER['RAMJET_MARK_DIR'] . '/' . basename((string)$_GET['mark']));
}
if (isset($_GET['sleep_ms'])) {
    usleep(1000 * (int)$_GET['sleep_ms']);
}

$in = file_get_contents('php://input');
$lines = [
    'id: ' . $id,
    'method: ' . $_SERVER['REQUEST_METHOD'],
    'uri: ' . $_SERVER['REQUEST_URI'],
    'remote-addr: ' . $_SERVER['REMOTE_ADDR'],
    'reqbody-len: ' . strlen($in),
    'reqbody-sha256: ' . hash('sha256', $in),
];
if (isset($_GET['body'])) {
    $lines[] = 'body: ' . $_GET['body'];
}
$hdrs = getallheaders();
ksort($hdrs);
foreach ($hdrs as $name => $value) {
    if ($value !== '') {
        $lines[] = 'hdr.' . $name . ': ' . $value;
    }
}
$out = implode("\n", $lines) . "\n\n";

$size = isset($_GET['size']) ? (int)$_GET['size'] : 0;
if ($size > strlen($out)) {
    $pad = "the quick brown fox jumps over the lazy dog 0123456789\n";
    $out .= substr(str_repeat($pad, intdiv($size - strlen($out), strlen($pad)) + 1), 0, $size - strlen($out));
}

if (isset($_GET['status'])) {
    http_response_code((int)$_GET['status']);
}
header('Content-Type: ' . ($_GET['ctype'] ?? 'text/plain; charset=utf-8'));
if (isset($_GET['setcookie'])) {
    header('Set-Cookie: sess=' . $id . '; Path=/; HttpOnly');
}
foreach ((array)($_GET['h'] ?? []) as $h) {
    header((string)$h, false);
}
if (!isset($_GET['chunked'])) {
    header('Content-Length: ' . strlen($out));
}
echo $out;
