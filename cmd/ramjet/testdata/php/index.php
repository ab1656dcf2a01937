<?php
// The front controller: answers every path that matches no file.
header('Content-Type: text/plain');
echo 'front: ', $_SERVER['REQUEST_URI'], "\n";
echo 'script: ', $_SERVER['SCRIPT_NAME'], "\n";
echo 'query: ', $_SERVER['QUERY_STRING'], "\n";
