<?php
// pub.php: a public fragment (Cache-Control: public, max-age=60) tagged frag-<name>.
$defaults = ['cc' => 'public', 'tag' => 'frag-' . ($_GET['name'] ?? 'pub')];
require __DIR__ . '/frag.php';
