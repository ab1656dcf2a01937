<?php
echo 'path_info: ', $_SERVER['PATH_INFO'] ?? '', "\n";
echo 'script: ', $_SERVER['SCRIPT_NAME'], "\n";
