<?php
// Reports the POST fields and uploaded files it received.
header('Content-Type: text/plain');
foreach ($_POST as $k => $v) {
    echo "post.$k: $v\n";
}
foreach ($_FILES as $k => $f) {
    echo "file.$k: ", $f['name'], ' ', $f['size'], ' ', hash_file('sha256', $f['tmp_name']), ' err=', $f['error'], "\n";
}
echo 'method: ', $_SERVER['REQUEST_METHOD'], "\n";
