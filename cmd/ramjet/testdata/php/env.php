<?php
header('Content-Type: text/plain');
echo 'env: ', getenv('RAMJET_TEST'), "\n";
echo 'memory_limit: ', ini_get('memory_limit'), "\n";
echo 'uid: ', posix_geteuid(), "\n";
echo 'pid: ', getmypid(), "\n";
echo 'https: ', $_SERVER['HTTPS'] ?? '', "\n";
echo 'remote: ', $_SERVER['REMOTE_ADDR'], "\n";
echo 'remote_port: ', $_SERVER['REMOTE_PORT'] ?? '', "\n";
echo 'server_addr: ', $_SERVER['SERVER_ADDR'] ?? '', "\n";
echo 'server_port: ', $_SERVER['SERVER_PORT'], "\n";
echo 'lscache: ', $_SERVER['HTTP_X_LSCACHE'] ?? '', "\n";
echo 'cookie: ', $_SERVER['HTTP_COOKIE'] ?? '', "\n";
