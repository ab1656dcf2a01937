<?php
// warm.php: a cacheable page that takes sleep_ms to make and counts the
// requests it has at once in $RAMJET_MARK_DIR/warm.conc ("now top"), so a
// test can read the most the origin had at a time (warm.php?conc=1) and
// start counting again (warm.php?conc=reset). A visitor's page asked with
// uncounted=1 is left out: the count is the warm-up's alone.
// bench/warm.bash serves it too (its warm-up group's site): a change here
// changes that bench.
$file = $_SERVER['RAMJET_MARK_DIR'] . '/warm.conc';

function bump(string $file, int $by): array {
    $f = fopen($file, 'c+');
    flock($f, LOCK_EX);
    [$now, $top] = array_map('intval', explode(' ', trim(stream_get_contents($f)) ?: '0 0') + [0, 0]);
    $now += $by;
    $top = max($top, $now);
    ftruncate($f, 0);
    rewind($f);
    fwrite($f, "$now $top");
    flock($f, LOCK_UN);
    fclose($f);
    return [$now, $top];
}

header('Content-Type: text/plain; charset=utf-8');
if (isset($_GET['conc'])) {
    header('Cache-Control: no-store');
    if ($_GET['conc'] === 'reset') {
        file_put_contents($file, '0 0', LOCK_EX);
    }
    echo implode(' ', bump($file, 0)), "\n";
    return;
}
$counted = !isset($_GET['uncounted']);
if ($counted) {
    bump($file, 1);
}
usleep(1000 * (int)($_GET['sleep_ms'] ?? 0));
if ($counted) {
    bump($file, -1);
}
header('Cache-Control: public, max-age=600');
echo 'page ', $_GET['p'] ?? '', ' ', bin2hex(random_bytes(8)), "\n";
