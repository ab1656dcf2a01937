<?php
echo "hello world";
